package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/vault"
)

func init() { register("init", newInitCmd) }

func newInitCmd(g *globals) *cobra.Command {
	var noIgnore bool
	cmd := &cobra.Command{
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

Both ignore files are written even where neither git nor Syncthing is
used yet, so that a vault shared later keeps its keys at home; the output
says which of them no sync tool reads now. --no-ignore-files writes
neither ('nexus doctor --fix' writes them later, and 'nexus doctor' asks
for them once the vault is in a git repository or a Syncthing folder).

Examples:
  nexus init ~/vault && export NEXUS_VAULT=~/vault
  nexus init --no-ignore-files ~/notes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runInit(g, args, noIgnore) },
	}
	cmd.Flags().BoolVar(&noIgnore, "no-ignore-files", false, "write no .gitignore or .stignore (for a vault no sync tool sees)")
	return cmd
}

// runInit makes a vault in args[0], --vault or the current folder (an
// existing one is left as it is, but for its ignore rules).
func runInit(g *globals, args []string, noIgnore bool) error {
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
	var ignores, unused []string
	if !noIgnore {
		if ignores, unused, err = initIgnoreRules(v); err != nil {
			return err
		}
	}
	res := struct {
		Vault   string   `json:"vault"`
		Created []string `json:"created"`
		// IgnoreRules are the ignore files written or brought up
		// to date (docs/operations.md, "Several machines").
		IgnoreRules []string `json:"ignore_rules"`
		// IgnoreUnused are those of them that no sync tool reads
		// yet: no git repository or Syncthing folder around the vault.
		IgnoreUnused []string `json:"ignore_rules_unused"`
	}{v.Root(), nonNil(created), nonNil(ignores), nonNil(unused)}
	return g.emit(res, nil, func(w io.Writer) {
		if len(ignores) > 0 {
			defer func() {
				fmt.Fprintf(w, "  ignore rules for what stays on this machine: %s\n", strings.Join(ignores, ", "))
				if len(unused) > 0 {
					fmt.Fprintf(w, "  (no %s around the vault reads %s yet: written for when it is shared;\n   'nexus init --no-ignore-files' leaves them out)\n", unusedTools(unused), strings.Join(unused, " or "))
				}
			}()
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

// unusedTools names the sync tools that would read the ignore files
// unused: "git repository", "Syncthing folder" or both.
func unusedTools(unused []string) string {
	var tools []string
	for _, u := range unused {
		switch filepath.Base(u) {
		case vault.GitIgnoreFile:
			tools = append(tools, "git repository")
		case vault.SyncthingIgnoreFile:
			tools = append(tools, "Syncthing folder")
		}
	}
	return strings.Join(tools, " or ")
}

// initIgnoreRules writes the .gitignore/.stignore rules for what is
// machine-local and returns the files changed, and of them those that no
// sync tool around the vault reads (no git repository, no Syncthing
// folder), relative to the vault where they are inside it.
func initIgnoreRules(v *vault.Vault) (changed, unused []string, err error) {
	changed, err = vault.EnsureIgnoreRules(v.Root())
	active := map[string]bool{}
	for _, t := range vault.IgnoreTargets(v.Root()) {
		active[t.Path] = active[t.Path] || t.Active
	}
	for i, p := range changed {
		if rel, rerr := v.Rel(p); rerr == nil {
			changed[i] = rel
		}
		if !active[p] {
			unused = append(unused, changed[i])
		}
	}
	return changed, unused, err
}

// nonNil makes JSON print [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
