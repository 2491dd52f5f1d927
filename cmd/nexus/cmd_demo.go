//go:build !lite

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/demo"
)

func init() { register("demo", newDemoCmd) }

// demoOptions are the flags of 'nexus demo'.
type demoOptions struct {
	dir     string // --dir
	keep    bool   // --keep
	appends int    // --appends (hidden: tests play a shorter scene 5)
}

func newDemoCmd(g *globals) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo [--dir DIR] [--keep=false]",
		Short: "Watch two agents stay in step through a vault (no setup needed)",
		Long: `Play the Nexus story in a fresh vault: two agents, lyra (operations, the kind
one runs on Hermes) and ella (research and planning, the kind one runs on
OpenClaw), each with its own MCP session to a real 'nexus serve --http'
started in-process on a loopback port. Six scenes, narrated step by step:

  1. 02:00 — lyra hands off through a signed log entry; ella's next session
     shows it before she answers, and she acknowledges it
  2. January decisions show in July's snapshots; a later one supersedes one
  3. lyra crashes mid-migration and resumes from her checkpoint
  4. ella proposes a fact about the user; a person approves it; it is in her
     memory index next session
  5. both agents append 500 entries at the same instant; every entry lands
     once and the log verifies
  6. search finds the 02:00 handoff in English and in Korean

It ends with 'nexus doctor' on the vault, the vault's path, how to open it
in Obsidian, and the MCP config to connect a real agent to it.

The vault is made in DIR (which must be new or empty), or else in a new
folder under the OS temp dir. Either way it is kept, so you can look at it;
the demo prints how to delete a temp one. --keep=false removes a temp vault
at the end of a successful run (a --dir vault is never removed).

The demo runs on a story clock: its entries are dated January to September
of last year.

Example:
  nexus demo
  nexus demo --dir ~/nexus-demo && obsidian ~/nexus-demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDemo(g, o) },
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "make the demo vault in DIR (new or empty) instead of a temp folder")
	cmd.Flags().BoolVar(&o.keep, "keep", true, "keep the vault when done; --keep=false deletes a temp vault at the end")
	// Tests play a shorter scene 5; the story is told with 500.
	cmd.Flags().IntVar(&o.appends, "appends", 500, "entries each agent appends in scene 5")
	cmd.Flags().MarkHidden("appends")
	return cmd
}

// runDemo plays the story in a fresh vault; with --json only the result
// is printed, not the narration.
func runDemo(g *globals, o demoOptions) error {
	out := g.stdout
	if g.json {
		out = io.Discard
	}
	inv := demoInvocation(hostDemoEnv())
	res, err := demo.Run(g.ctx, demo.Options{Dir: o.dir, Out: out, Appends: o.appends, Remove: !o.keep,
		Command: inv.command, MCPCommand: inv.mcpCommand, Setup: inv.setup})
	if err != nil && res != nil && res.Vault != "" && !g.json {
		fmt.Fprintf(g.stderr, "nexus: the demo's vault is %s\n", res.Vault)
	}
	return g.emit(res, err, nil)
}

// invocation is how the demo's closing instructions run nexus, and what
// to tell a person who does not have it installed.
type invocation struct {
	command    string // the commands' first word(s): "nexus", a path, "go run ./cmd/nexus"
	mcpCommand string // the MCP config's "command": a program, never a 'go run' line
	setup      string // how to get nexus, when it is not on PATH; "" when it is
}

// demoEnv is what demoInvocation looks at, so that tests can set it.
type demoEnv struct {
	executable string                       // this program (os.Executable)
	lookPath   func(string) (string, error) // exec.LookPath
	sameFile   func(a, b string) bool       // both name one file
	inCheckout bool                         // the working folder holds cmd/nexus (a clone's root)
	goBin      func() string                // where 'go install' puts binaries; "" if unknown
	windows    bool
}

func hostDemoEnv() demoEnv {
	exe, _ := os.Executable()
	_, err := os.Stat(filepath.Join("cmd", "nexus", "main.go"))
	return demoEnv{
		executable: exe,
		lookPath:   exec.LookPath,
		sameFile: func(a, b string) bool {
			sa, err1 := os.Stat(a)
			sb, err2 := os.Stat(b)
			return err1 == nil && err2 == nil && os.SameFile(sa, sb)
		},
		inCheckout: err == nil,
		goBin:      goInstallDir,
		windows:    runtime.GOOS == "windows",
	}
}

// demoInvocation: "nexus" when that is on PATH and is this program, or
// when this is 'go run' and a nexus is installed; this binary's absolute
// path when it is not on PATH; and for 'go run' with nothing installed,
// 'go run' lines and how to install it (go install, and GOPATH/bin on
// PATH, which Go does not do for you).
func demoInvocation(e demoEnv) invocation {
	name := "nexus"
	if e.windows {
		name = "nexus.exe"
	}
	onPath, err := e.lookPath("nexus")
	installed := err == nil
	goRun := isGoRunBinary(e.executable)
	switch {
	case installed && (goRun || e.executable == "" || e.sameFile(onPath, e.executable)):
		return invocation{command: "nexus", mcpCommand: "nexus"}
	case !goRun && e.executable != "":
		why := "nexus is not on your PATH"
		if installed {
			why = "the nexus on your PATH (" + onPath + ") is another binary"
		}
		return invocation{command: e.executable, mcpCommand: e.executable, setup: fmt.Sprintf(
			"%s: the commands here name this one, %s, by its path.\nTo type just 'nexus', put %s on your PATH.", why, e.executable, filepath.Dir(e.executable))}
	}
	cmd, where := "go run ./cmd/nexus", "from this checkout"
	if !e.inCheckout {
		cmd, where = "go run github.com/nexus-memory/nexus/cmd/nexus", "from inside the checkout"
	}
	dir := ""
	if e.goBin != nil {
		dir = e.goBin()
	}
	mcp, binDir := "nexus", "$(go env GOPATH)/bin"
	if dir != "" {
		mcp, binDir = filepath.Join(dir, name), dir
	}
	return invocation{command: cmd, mcpCommand: mcp, setup: fmt.Sprintf(`nexus is not installed (this demo ran with 'go run'). To install it, run
  go install ./cmd/nexus
in the checkout, and put %s on your PATH: Go puts binaries there but
does not add it to PATH (export PATH="$PATH:%s").
Until then the commands here run '%s' (%s), and the MCP
config names %s, where go install puts it.`, binDir, binDir, cmd, where, mcp)}
}

// isGoRunBinary reports whether exe is a binary 'go run' built, in a
// go-build folder under the temp dir and deleted when it exits.
func isGoRunBinary(exe string) bool {
	return strings.Contains(filepath.ToSlash(exe), "/go-build")
}

// goInstallDir is where 'go install' puts binaries: $GOBIN, else the
// first $GOPATH's bin (as 'go env' reports them); "" without go.
func goInstallDir() string {
	out, err := exec.Command("go", "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(string(out), "\n") // GOBIN's line is empty when unset
	if len(lines) > 0 && strings.TrimSpace(lines[0]) != "" {
		return strings.TrimSpace(lines[0])
	}
	if len(lines) > 1 {
		if paths := filepath.SplitList(strings.TrimSpace(lines[1])); len(paths) > 0 && paths[0] != "" {
			return filepath.Join(paths[0], "bin")
		}
	}
	return ""
}
