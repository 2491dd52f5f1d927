package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func init() { register("completion", newCompletionCmd) }

// completionShells are the shells 'nexus completion' writes scripts for.
var completionShells = []string{"bash", "zsh", "fish", "powershell"}

func newCompletionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print a shell completion script for commands, flags and agent names",
		Long: `Print the completion script for a shell on stdout. Once loaded, TAB completes
commands, flags and their values, including agent names for --agent (read
from the vault of --vault or $NEXUS_VAULT when TAB is pressed). The script
calls nexus itself to complete, so it follows upgrades without reinstalling.

bash (needs the bash-completion package):
  nexus completion bash > ~/.local/share/bash-completion/completions/nexus
zsh (with compinit; any folder on $fpath):
  nexus completion zsh > "${fpath[1]}/_nexus"
fish:
  nexus completion fish > ~/.config/fish/completions/nexus.fish
PowerShell (add it to $PROFILE to keep it):
  nexus completion powershell | Out-String | Invoke-Expression

With --json the script is the "script" field of one JSON document.

Example:
  source <(nexus completion bash)`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: completionShells,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompletion(g, cmd.Root(), args[0])
		},
	}
}

func runCompletion(g *globals, root *cobra.Command, shell string) error {
	var b bytes.Buffer
	var err error
	switch shell {
	case "bash":
		err = root.GenBashCompletionV2(&b, true)
	case "zsh":
		err = root.GenZshCompletion(&b)
	case "fish":
		err = root.GenFishCompletion(&b, true)
	case "powershell":
		err = root.GenPowerShellCompletionWithDesc(&b)
	default:
		return usagef("no completion for shell %q: choose bash, zsh, fish or powershell (see 'nexus completion --help')", shell)
	}
	if err != nil {
		return fmt.Errorf("write %s completion: %w", shell, err)
	}
	res := struct {
		Shell  string `json:"shell"`
		Script string `json:"script"`
	}{shell, b.String()}
	return g.emit(res, nil, func(w io.Writer) { io.WriteString(w, res.Script) })
}
