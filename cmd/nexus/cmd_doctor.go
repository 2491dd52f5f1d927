//go:build !lite

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/doctor"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register("doctor", newDoctorCmd) }

// doctorOptions are the flags of 'nexus doctor'.
type doctorOptions struct {
	fix      bool          // --fix
	lockWait time.Duration // --lock-wait
}

func newDoctorCmd(g *globals) *cobra.Command {
	var o doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check a vault's health and say how to fix each problem",
		Long: `Check the vault and print every problem with the exact command that fixes it:

  config      .nexus/config.yaml parses; limits are positive; token hashes
              belong to agents
  key-mode    private keys in .nexus/keys/ are mode 0600 (not on Windows)
  key-pair    each agent's private key matches the public key in IDENTITY.md
  log         the live log and decision log verify (signatures and chain)
  forks       no feed has two branches (one agent appending on two machines
              that share a device name)
  cites       every entry another feed cites is here; one not here yet is
              a note for a day (a sync tool still copying), then a problem
  synced-keys no private key travelled: this machine's key is not listed
              for another device or signing its feed, no key file in a
              conflict copy or among the notes, none tracked by git
  device-name no second machine uses this machine's device name (entries
              in its own feeds it did not append, two keys of one device
              taking turns)
  index       the search index is current with the markdown files
  locks       no lock under .nexus/state/locks/ stays held (a hung process)
  temp-files  no temp file (.NAME.tmp-*) left by an interrupted write
  review      no fact has waited in review/pending/ for over a week

  odd-files   notes that are binary or not UTF-8, start with a byte-order
              mark, have decomposed (NFD) names, or are symlinks out of the
              vault
  conflicts   no conflict copy (Syncthing, Dropbox, iCloud, git) and no git
              conflict markers; no conflict waiting for a person's choice
  ignore-rules  .gitignore/.stignore exclude what is machine-local (keys,
              state, index, timeline), where git or Syncthing is in use

Each finding is a problem or a note. A problem is something broken or at
risk (a log entry that does not verify, a key others can read): exit 1
while any is found. A check that could not run at all (a lock held too
long, a file it may not read, an I/O error) is a problem too, but when
nothing else is found the exit code is 3, "could not check", not 1. A note is worth knowing but normal use produces it (the
index a few writes behind with no watcher running, an odd file): it is
shown with what to do, and the exit code stays 0, so a health check run by
cron alerts only on problems.

Doctor only reads; it changes nothing, unless given --fix. With --fix it
first repairs what needs no judgement: it writes the ignore rules (a marked
block; your own lines stay), merges conflict copies and conflict markers of
Nexus's files without loss (copies are kept in review/archive/conflicts/),
files what needs a choice in review/pending/, carries out decisions made
in Obsidian (status: approved/rejected), then runs the checks. Exit 0
with no problems (notes or not), 1 with any problem. With --json, every
finding carries "severity": "problem" or "note", and the report counts
both.

Examples:
  nexus --vault ~/vault doctor
  nexus --vault ~/vault doctor --fix
  nexus doctor --json | jq '.results[].findings[]? | select(.severity == "problem")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runDoctor(g, o) },
	}
	cmd.Flags().DurationVar(&o.lockWait, "lock-wait", 2*time.Second, "how long a lock must stay held to be reported")
	cmd.Flags().BoolVar(&o.fix, "fix", false, "first write the ignore rules and merge sync conflict copies (what needs no judgement)")
	return cmd
}

// runDoctor checks the vault (after --fix, if given) and prints what it
// found; a vault it could not fully check exits 3.
func runDoctor(g *globals, o doctorOptions) error {
	dir, err := vault.Find(g.vaultDir)
	if err == nil {
		err = g.checkVaultDir(dir)
	}
	if err != nil {
		return err
	}
	var fixed *doctor.FixReport
	if o.fix {
		if fixed, err = doctor.Fix(g.ctx, dir, doctor.Options{Now: g.now}); err != nil {
			return err
		}
	}
	rep, err := doctor.Run(g.ctx, dir, doctor.Options{Now: g.now, LockWait: o.lockWait})
	if err != nil {
		return err
	}
	rep.Fixed = fixed
	var verr error
	switch {
	case rep.OK:
	case rep.Problems == rep.Unchecked:
		// Nothing found wrong, but not everything could be
		// looked at: exit 3, not 1.
		verr = couldNotCheck(fmt.Errorf("doctor found nothing wrong, but could not check %s (the \"could not\" lines above): the vault was not fully checked", plural(rep.Unchecked, "thing", "things")))
	default:
		verr = fmt.Errorf("doctor found %s: run the fix under each", plural(rep.Problems, "problem", "problems"))
	}
	return g.emit(rep, verr, func(w io.Writer) { printDoctor(w, rep) })
}

func printDoctor(w io.Writer, rep *doctor.Report) {
	fmt.Fprintf(w, "Vault %s\n", rep.Vault)
	printFixed(w, rep.Fixed)
	problems, notes, skipped := 0, 0, 0
	for _, r := range rep.Results {
		if r.Skipped {
			skipped++
		}
		mark := "ok  "
		switch {
		case !r.OK:
			mark = "FAIL"
		case r.Skipped:
			mark = "skip"
		case len(r.Findings) > 0:
			mark = "note"
		}
		fmt.Fprintf(w, "  %s  %-10s  %s\n", mark, r.Check, r.Summary)
		for _, f := range r.Findings {
			label, how := "", "fix"
			if f.Severity == doctor.SeverityNote {
				label, how = "note: ", "hint"
				notes++
			} else {
				problems++
			}
			if f.Path != "" {
				fmt.Fprintf(w, "        %s%s: %s\n", label, f.Path, f.Problem)
			} else {
				fmt.Fprintf(w, "        %s%s\n", label, f.Problem)
			}
			fmt.Fprintf(w, "        %s: %s\n", how, f.Fix)
		}
	}
	switch {
	case problems == 0 && notes == 0 && skipped > 0:
		fmt.Fprintf(w, "No problems in the checks that ran; %s.\n", plural(skipped, "check was skipped", "checks were skipped"))
	case problems == 0 && notes == 0:
		fmt.Fprintln(w, "All checks passed.")
	case problems == 0:
		fmt.Fprintf(w, "No problems; %s above.\n", plural(notes, "note", "notes"))
	case notes == 0:
		fmt.Fprintf(w, "%s.\n", needAttention(problems))
	default:
		fmt.Fprintf(w, "%s (and %s).\n", needAttention(problems), plural(notes, "note", "notes"))
	}
}

func needAttention(n int) string {
	if n == 1 {
		return "1 problem needs attention"
	}
	return fmt.Sprintf("%d problems need attention", n)
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
	for _, it := range append(f.Reviews.Approved, f.Reviews.Rejected...) {
		n++
		fmt.Fprintf(w, "  fixed  %s: %s in Obsidian, carried out\n", it.Path, it.Status)
	}
	for _, k := range f.RestoredKeys {
		n++
		fmt.Fprintf(w, "  fixed  %s: this machine's key (device %s) listed again after a merge dropped it\n", identity.IdentityPath(k.Agent), k.Device)
	}
	for _, it := range f.Reviews.Failed {
		n++
		fmt.Fprintf(w, "  FAIL   %s: approved, but could not be applied: %s\n", it.Path, it.Error)
	}
	if n == 0 {
		fmt.Fprintln(w, "  nothing needed fixing")
	}
}
