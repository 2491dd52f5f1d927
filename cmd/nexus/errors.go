package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// Exit codes (SPEC §8, docs/cli.md). Every command keeps to them; a table
// test over the whole command tree checks it.
const (
	exitOK      = 0
	exitRefused = 1 // refused or failed: a limit, the scan, no match, not found, tampering found
	exitUsage   = 2 // bad usage: unknown command or flag, wrong arguments, invalid input
	exitUnsure  = 3 // could not check: a verification that could not run (a lock, permissions, I/O), or any command whose lock stayed held past lock_timeout or whose search index holder does not answer
)

// usageError marks bad usage (exit 2).
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// uncheckedError marks a check that could not be carried out (exit 3), as
// distinct from one that ran and found something wrong (exit 1).
type uncheckedError struct{ err error }

func (e uncheckedError) Error() string { return e.err.Error() }
func (e uncheckedError) Unwrap() error { return e.err }

// couldNotCheck marks err as "the check could not run" (exit 3).
func couldNotCheck(err error) error { return uncheckedError{err} }

// exitCode maps an error to the exit code.
func (g *globals) exitCode(err error) int {
	var ue usageError
	var un uncheckedError
	var nf noFullError
	switch {
	case errors.As(err, &nf):
		return exitUsage
	case errors.As(err, &un), errors.Is(err, vault.ErrLockTimeout),
		errors.Is(err, holder.ErrBusy), holder.IsConnError(err):
		// Nothing was checked or done; retrying may succeed. A search
		// index held by a process that does not answer (stopped, hung)
		// is the search's lock held past its timeout.
		return exitUnsure
	case g.ran && errors.Is(err, vault.ErrTooLarge):
		return exitRefused // a limit (SPEC §8), though the input is rejected
	case !g.ran, errors.As(err, &ue), errors.Is(err, vault.ErrInvalid):
		return exitUsage
	}
	return exitRefused
}

// fail reports err, from command cmd, and returns the exit code: the
// message in plain words on stderr, with --json also one JSON document on
// stdout (unless the command printed its result already), and for bad
// usage the help to read.
func (g *globals) fail(cmd *cobra.Command, err error) int {
	code := g.exitCode(err)
	msg := g.plainMessage(cmd, err)
	var re reportedError
	if !errors.As(err, &re) && g.json {
		enc := json.NewEncoder(g.stdout)
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			Success  bool   `json:"success"`
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}{false, msg, code})
	}
	fmt.Fprintf(g.stderr, "nexus: %s\n", msg)
	if code == exitUsage && !errors.As(err, new(noFullError)) {
		path := "nexus"
		if cmd != nil && cmd.Name() != "help" {
			path = cmd.CommandPath()
		}
		fmt.Fprintf(g.stderr, "Run '%s --help' for usage.\n", path)
	}
	return code
}

// jsonRequested reports whether --json is among the global flags, before
// cobra parses them: a bad command line gets its JSON document too.
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1":
			return true
		}
	}
	return false
}

// sentinels are the labels domain errors carry for errors.Is; a person
// reading the message does not need them ("summary is empty: invalid
// input").
var sentinels = []error{agents.ErrFactExists, agents.ErrIndexFull, vault.ErrTooLarge, vault.ErrInvalid, vault.ErrRefused, vault.ErrNotFound}

// cliWords turns the words domain errors use for MCP tools into the flags
// and commands a person types here. The MCP server keeps its own wording.
var cliWords = strings.NewReplacer(
	"(old_text is a case-sensitive substring). Check current_entries and retry", "(--old is a case-sensitive substring). Check the entries ('nexus memory show') and retry",
	"a longer old_text", "a longer --old",
	"(see matches)", "(listed below)",
	"(see current_entries), then retry — in this same turn; several operations can be sent at once.", "('nexus memory show' lists them), then retry.",
	"(the fact_write tool, or 'nexus fact write')", "('nexus fact write')",
	"old_text", "--old",
	"(write it with update set, 'nexus fact write --update', to replace it, or choose another name)", "(replace it with 'nexus fact write --update', or choose another name)",
)

// cobraPatterns match cobra's and pflag's argument and flag errors, which
// plainMessage rewords.
type cobraPatterns struct{ accepts, atLeast, atMost, noArgs, badValue *regexp.Regexp }

// cobraErrors compiles the patterns on the first error: package-level
// regexps are compiled at every start, and these were half a millisecond
// of every command's start-up (docs/benchmarks.md, "Issue 33: start-up").
var cobraErrors = sync.OnceValue(func() cobraPatterns {
	return cobraPatterns{
		accepts:  regexp.MustCompile(`^accepts (\d+) arg\(s\), received (\d+)$`),
		atLeast:  regexp.MustCompile(`^requires at least (\d+) arg\(s\), only received (\d+)$`),
		atMost:   regexp.MustCompile(`^accepts at most (\d+) arg\(s\), received (\d+)$`),
		noArgs:   regexp.MustCompile(`^unknown command "(.*)" for "(.*)"$`),
		badValue: regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: (.*)$`),
	}
})

// plainMessage is err's message for a person: sentinel labels dropped,
// MCP words replaced, cobra's argument errors said in plain words, and an
// unknown agent explained with the agents there are.
func (g *globals) plainMessage(cmd *cobra.Command, err error) string {
	var na *identity.NoAgentError
	if errors.As(err, &na) {
		return g.noAgentMessage(na.Name)
	}
	msg := err.Error()
	for _, s := range sentinels {
		if errors.Is(err, s) {
			// Only the label as a segment of its own: "x: refused" or
			// "x: refused: y", not "x: refused by the scan".
			label := ": " + s.Error()
			msg = strings.ReplaceAll(msg, label+": ", ": ")
			msg = strings.TrimSuffix(msg, label)
		}
	}
	msg = cliWords.Replace(msg)
	use := "nexus"
	if cmd != nil {
		use = cmd.UseLine()
		use = strings.TrimSuffix(use, " [flags]")
	}
	re := cobraErrors()
	if m := re.accepts.FindStringSubmatch(msg); m != nil {
		if m[2] == "0" {
			return fmt.Sprintf("'%s' needs %s", use, argCount(m[1]))
		}
		return fmt.Sprintf("'%s' takes %s, got %s (quote text with spaces)", use, argCount(m[1]), m[2])
	}
	if m := re.atLeast.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("'%s' needs at least %s", use, argCount(m[1]))
	}
	if m := re.atMost.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("'%s' takes at most %s, got %s (quote text with spaces)", use, argCount(m[1]), m[2])
	}
	if m := re.noArgs.FindStringSubmatch(firstLine(msg)); m != nil {
		s := fmt.Sprintf("%q is not a command of '%s'", m[1], m[2])
		if cmd != nil {
			if sug := cmd.SuggestionsFor(m[1]); len(sug) > 0 {
				s += "; did you mean " + strings.Join(sug, " or ") + "?"
			}
		}
		return s
	}
	if m := re.badValue.FindStringSubmatch(msg); m != nil {
		flag := m[2]
		if i := strings.LastIndex(flag, "--"); i >= 0 {
			flag = flag[i:]
		}
		why := m[3]
		if strings.Contains(why, "strconv.") {
			why = "want a whole number"
		}
		if strings.Contains(m[3], "time: ") {
			why = "want a duration like 30s, 10m or 2h"
		}
		return fmt.Sprintf("%s %q: %s", flag, m[1], why)
	}
	return msg
}

func argCount(n string) string {
	switch n {
	case "0":
		return "no arguments"
	case "1":
		return "1 argument"
	}
	return n + " arguments"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// noAgentMessage says that name is no agent here, which agents there are,
// and how to add it.
func (g *globals) noAgentMessage(name string) string {
	msg := fmt.Sprintf("no agent named %q in this vault", name)
	if names := g.agentNames(); len(names) > 0 {
		sort.Strings(names)
		msg += " (agents: " + strings.Join(names, ", ") + ")"
	} else {
		msg += " (it has no agents yet)"
	}
	add := name
	if identity.ValidName(name) != nil {
		add = "NAME"
	}
	return msg + "; to add it: nexus agent add " + add + ` --role "..."`
}

// knownAgent returns nil if name is an agent of v, else the error that
// lists the agents: filters (--agent, --from, --by) use it so a typo is an
// error rather than an empty result.
func knownAgent(v *vault.Vault, name string) error {
	if name == "" {
		return nil
	}
	if _, err := identity.Load(v, name); errors.Is(err, identity.ErrNoAgent) || errors.Is(err, identity.ErrBadName) {
		return &identity.NoAgentError{Name: name}
	}
	return nil
}
