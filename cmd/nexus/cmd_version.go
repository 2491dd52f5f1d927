package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/internal/version"
)

func init() { register("version", newVersionCmd) }

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of this nexus binary (same as nexus --version)",
		Long: `Print the module version and the commit this binary was built from, as the Go
toolchain recorded them, and the Go version and platform. 'go install
github.com/nexus-memory/nexus/cmd/nexus@v1.2.0' reports v1.2.0; a build in a
git checkout reports a pseudo-version with the commit (+dirty when files
were modified); only a build that recorded neither ('go run') reports "dev",
and then names the commit checked out in the folder it was built from, if
that is still there ("commit_source": "checkout" with --json).
'nexus serve' reports the same version to MCP clients (serverInfo). The
lean build (nexus-lite, docs/cli.md) adds "(lean build, nexus-lite)" and,
with --json, "build": "lite".

Examples:
  nexus version
  nexus --version
  nexus version --json | jq -r .version`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runVersion(g) },
	}
}

func runVersion(g *globals) error {
	info := version.Get()
	if liteBuild {
		// The lean build says so; the full build's output is as it was.
		res := struct {
			version.Info
			Build string `json:"build"`
		}{info, "lite"}
		return g.emit(res, nil, func(w io.Writer) { fmt.Fprintln(w, versionLine(info)+" (lean build, nexus-lite)") })
	}
	return g.emit(info, nil, func(w io.Writer) { fmt.Fprintln(w, versionLine(info)) })
}

// versionLine is "nexus v1.2.0 (commit aa5f43e1b2c3, 2026-12-01, modified)
// go1.26.8 linux/amd64".
func versionLine(info version.Info) string {
	s := "nexus " + info.Version
	if info.Commit != "" {
		c := info.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if info.CommitSource == "checkout" {
			s += " checked out where it was built from"
		}
		if !info.CommitTime.IsZero() {
			s += ", " + info.CommitTime.UTC().Format("2006-01-02")
		}
		if info.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + info.Go + " " + info.Platform
}
