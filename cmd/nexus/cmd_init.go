package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/vault"
)

func init() { register(newInitCmd) }

func newInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Make DIR (default: the current folder) a Nexus vault",
		Long: `Make DIR a vault: create .nexus/ (config, keys, index, state) and
ignore rules in .gitignore and .stignore for what must stay on this machine
(keys, state, index, the timeline). Nothing else: the visible folders
(agents/, log/, review/) appear when Nexus first writes into them, so an
Obsidian vault shows nothing new. Existing files and folders are never
changed, except that an ignore file gets a marked block appended (your own
lines stay), so it is safe on an existing Obsidian vault and safe to run
twice. DIR is made if it does not exist.

Example:
  nexus init ~/vault && export NEXUS_VAULT=~/vault`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runInit(g, args) },
	}
}

// runInit makes a vault in args[0], --vault or the current folder (an
// existing one is left as it is, but for its ignore rules).
func runInit(g *globals, args []string) error {
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	} else if g.vaultDir != "" {
		dir = g.vaultDir
	}
	v, created, err := vault.Init(dir)
	if err != nil {
		return err
	}
	ignores, err := initIgnoreRules(v)
	if err != nil {
		return err
	}
	res := struct {
		Vault   string   `json:"vault"`
		Created []string `json:"created"`
		// IgnoreRules are the ignore files written or brought up
		// to date (docs/operations.md, "Several machines").
		IgnoreRules []string `json:"ignore_rules"`
	}{v.Root(), nonNil(created), nonNil(ignores)}
	return g.emit(res, nil, func(w io.Writer) {
		if len(ignores) > 0 {
			defer fmt.Fprintf(w, "  ignore rules for what stays on this machine: %s\n", strings.Join(ignores, ", "))
		}
		if len(created) == 0 {
			if len(ignores) > 0 {
				fmt.Fprintf(w, "%s is already a Nexus vault.\n", v.Root())
				return
			}
			fmt.Fprintf(w, "%s is already a Nexus vault; nothing changed.\n", v.Root())
			return
		}
		fmt.Fprintf(w, "Initialised Nexus vault in %s\n", v.Root())
		for _, c := range created {
			fmt.Fprintf(w, "  created %s\n", c)
		}
		fmt.Fprintf(w, "Next: nexus --vault %s agent add NAME --role \"...\"\n", v.Root())
	})
}

// initIgnoreRules writes the .gitignore/.stignore rules for what is
// machine-local and returns the files changed, relative to the vault where
// they are inside it.
func initIgnoreRules(v *vault.Vault) ([]string, error) {
	changed, err := vault.EnsureIgnoreRules(v.Root())
	for i, p := range changed {
		if rel, rerr := v.Rel(p); rerr == nil {
			changed[i] = rel
		}
	}
	return changed, err
}

// nonNil makes JSON print [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
