package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/vault"
)

func init() { register(newInitCmd) }

func newInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init [DIR]",
		Short: "Make DIR (default: the current folder) a Nexus vault",
		Long: `Create the vault layout in DIR: .nexus/ (config, keys, index, state),
agents/, log/live/, projects/ and review/. Existing files and folders are
never changed, so it is safe on an existing Obsidian vault and safe to run
twice.

Example:
  nexus init ~/vault && export NEXUS_VAULT=~/vault`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			res := struct {
				Vault   string   `json:"vault"`
				Created []string `json:"created"`
			}{v.Root(), nonNil(created)}
			return g.emit(res, nil, func(w io.Writer) {
				if len(created) == 0 {
					fmt.Fprintf(w, "%s is already a Nexus vault; nothing changed.\n", v.Root())
					return
				}
				fmt.Fprintf(w, "Initialised Nexus vault in %s\n", v.Root())
				for _, c := range created {
					fmt.Fprintf(w, "  created %s\n", c)
				}
				fmt.Fprintf(w, "Next: nexus --vault %s agent add NAME --role \"...\"\n", v.Root())
			})
		},
	}
}

// nonNil makes JSON print [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
