package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/internal/doctor"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register(newDoctorCmd) }

// errNeedsAttention is returned when doctor found problems (exit 1).
var errNeedsAttention = errors.New("the vault needs attention; run the fixes above")

func newDoctorCmd(g *globals) *cobra.Command {
	var lockWait time.Duration
	var fix bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check a vault's health and say how to fix each problem",
		Long: `Check the vault and print every problem with the exact command that fixes it:

  config      .nexus/config.yaml parses; limits are positive; token hashes
              belong to agents
  key-mode    private keys in .nexus/keys/ are mode 0600 (not on Windows)
  key-pair    each agent's private key matches the public key in IDENTITY.md
  log         the live log and decision log verify (signatures and chain)
  index       the search index is current with the markdown files
  locks       no lock under .nexus/state/locks/ stays held (a hung process)
  temp-files  no temp file (.NAME.tmp-*) left by an interrupted write
  review      no fact has waited in review/pending/ for over a week

  conflicts   no conflict copy (Syncthing, Dropbox, iCloud, git) and no git
              conflict markers; no conflict waiting for a person's choice
  ignore-rules  .gitignore/.stignore exclude what is machine-local (keys,
              state, index, timeline), where git or Syncthing is in use

Doctor only reads; it changes nothing, unless given --fix. With --fix it
first repairs what needs no judgement: it writes the ignore rules (a marked
block; your own lines stay), merges conflict copies and conflict markers of
Nexus's files without loss (copies are kept in review/archive/conflicts/),
files what needs a choice in review/pending/, then runs the checks. Exit
code 0 when all is well, 1 when anything needs attention.

Example:
  nexus --vault ~/vault doctor
  nexus --vault ~/vault doctor --fix
  nexus doctor --json | jq '.results[] | select(.ok | not)'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := vault.Find(g.vaultDir)
			if err != nil {
				return err
			}
			var fixed *doctor.FixReport
			if fix {
				if fixed, err = doctor.Fix(g.ctx, dir, doctor.Options{Now: g.now}); err != nil {
					return err
				}
			}
			rep, err := doctor.Run(g.ctx, dir, doctor.Options{Now: g.now, LockWait: lockWait})
			if err != nil {
				return err
			}
			rep.Fixed = fixed
			var verr error
			if !rep.OK {
				verr = errNeedsAttention
			}
			return g.emit(rep, verr, func(w io.Writer) { printDoctor(w, rep) })
		},
	}
	cmd.Flags().DurationVar(&lockWait, "lock-wait", 2*time.Second, "how long a lock must stay held to be reported")
	cmd.Flags().BoolVar(&fix, "fix", false, "first write the ignore rules and merge sync conflict copies (what needs no judgement)")
	return cmd
}

func printDoctor(w io.Writer, rep *doctor.Report) {
	fmt.Fprintf(w, "Vault %s\n", rep.Vault)
	printFixed(w, rep.Fixed)
	n := 0
	for _, r := range rep.Results {
		mark := "ok  "
		if !r.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s  %-10s  %s\n", mark, r.Check, r.Summary)
		for _, f := range r.Findings {
			n++
			if f.Path != "" {
				fmt.Fprintf(w, "        %s: %s\n", f.Path, f.Problem)
			} else {
				fmt.Fprintf(w, "        %s\n", f.Problem)
			}
			fmt.Fprintf(w, "        fix: %s\n", f.Fix)
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "All checks passed.")
		return
	}
	fmt.Fprintf(w, "%d problem(s) need attention.\n", n)
}

// printFixed lists what 'doctor --fix' repaired.
func printFixed(w io.Writer, f *doctor.FixReport) {
	if f == nil {
		return
	}
	n := 0
	if f.ConfigSetAside != "" {
		n++
		fmt.Fprintf(w, "  fixed  .nexus/config.yaml held conflict markers: that version is kept as %s, the first side put in place\n", f.ConfigSetAside)
	}
	for _, p := range f.IgnoreFiles {
		n++
		fmt.Fprintf(w, "  fixed  %s: ignore rules for what is machine-local written\n", p)
	}
	for _, r := range f.Conflicts.Resolved {
		n++
		fmt.Fprintf(w, "  fixed  %s (%s): %s\n", r.Path, r.Action, r.Detail)
	}
	if n == 0 {
		fmt.Fprintln(w, "  nothing needed fixing")
	}
}
