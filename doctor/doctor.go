package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// Severity says what a [Finding] means for the vault's health.
type Severity string

// The severities. A check file says which one each finding has; a finding
// that names none is a problem, so a check can only err on the side of
// alarm.
const (
	// SeverityProblem is something broken or at risk that needs a person:
	// doctor exits 1 while any is found. Examples: a log entry that does
	// not verify, a private key others can read, a lock held by a hung
	// process.
	SeverityProblem Severity = "problem"
	// SeverityNote is worth knowing but nothing is broken, and ordinary use
	// produces it: doctor shows it and still exits 0, so a cron health
	// check does not alert on it. Examples: the index a few writes behind
	// with no watcher running, a note saved with a byte-order mark, a file
	// name in decomposed Unicode.
	SeverityNote Severity = "note"
)

// Finding is one thing doctor found, with the command that fixes it.
type Finding struct {
	// Check is the name of the check that found it ("key-mode", "log", ...).
	Check string `json:"check"`
	// Severity is [SeverityProblem] or [SeverityNote]; [Run] sets an empty
	// one to SeverityProblem.
	Severity Severity `json:"severity"`
	// Path is the vault-relative file concerned, if any.
	Path string `json:"path,omitempty"`
	// Problem says what is wrong, in plain words.
	Problem string `json:"problem"`
	// Fix is the command (or, where no command can do it, the action) that
	// fixes the problem.
	Fix string `json:"fix"`
	// Unchecked marks the problem "the check could not run" (a lock held
	// too long, a permission or I/O error): nothing was found either way.
	Unchecked bool `json:"unchecked,omitempty"`
}

// Result is the outcome of one check.
type Result struct {
	// Check is the check's name.
	Check string `json:"check"`
	// OK is true when the check found no problem (it may have found notes).
	OK bool `json:"ok"`
	// Skipped is true when the check did not run (the config does not
	// parse, a lock it needs is stuck); Summary then says why.
	Skipped bool `json:"skipped,omitempty"`
	// Summary says what was checked, in one line.
	Summary string `json:"summary"`
	// Findings are the problems and notes found, with their fixes.
	Findings []Finding `json:"findings,omitempty"`
}

// Report is the outcome of [Run].
type Report struct {
	// Vault is the absolute path of the vault checked.
	Vault string `json:"vault"`
	// OK is true when no check found a problem (notes may have been found).
	OK bool `json:"ok"`
	// Problems and Notes count the findings of each severity.
	Problems int `json:"problems"`
	Notes    int `json:"notes"`
	// Unchecked counts the problems that are checks that could not run;
	// when every problem is one, the vault could not be checked rather
	// than found wanting ('nexus doctor' exits 3, not 1).
	Unchecked int `json:"unchecked"`
	// Results holds one entry per check, in the order they ran.
	Results []Result `json:"results"`
	// Fixed is what 'doctor --fix' repaired before the checks ran ([Fix]).
	Fixed *FixReport `json:"fixed,omitempty"`
}

// Findings returns every finding of every check.
func (r *Report) Findings() []Finding {
	var all []Finding
	for _, res := range r.Results {
		all = append(all, res.Findings...)
	}
	return all
}

// Options configure [Run]. The zero value is usable.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// Command is how fix commands invoke Nexus (default "nexus"); the
	// vault flag is added to each.
	Command string
	// LockWait is how long a lock must stay held, while doctor watches it,
	// to be reported (default 2s). Locks are normally held for
	// milliseconds.
	LockWait time.Duration
	// TempAge is the age from which a temp file is a crash's leftover rather
	// than a write in progress (default 10 minutes).
	TempAge time.Duration
	// ReviewAge is the age from which a pending review is overdue (default
	// one week).
	ReviewAge time.Duration
	// CiteAge is how long an entry another feed cites may be missing
	// before it is a problem rather than a note "not here yet" (default
	// one day).
	CiteAge time.Duration
}

func (o *Options) defaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Command == "" {
		o.Command = "nexus"
	}
	if o.LockWait <= 0 {
		o.LockWait = 2 * time.Second
	}
	if o.TempAge <= 0 {
		o.TempAge = atomicfile.StaleAge // the age from which the next writer removes them
	}
	if o.ReviewAge <= 0 {
		o.ReviewAge = 7 * 24 * time.Hour
	}
	if o.CiteAge <= 0 {
		o.CiteAge = 24 * time.Hour
	}
}

// checker runs the checks of one [Run].
type checker struct {
	root string       // absolute vault root
	v    *vault.Vault // nil when the vault could not be opened
	opts Options
	// stuck names the lock files (base names) found held for long; checks
	// that need those locks skip rather than wait behind a hung process.
	stuck map[string]bool
	// The log, verified once for every check that reads it (feeds.go).
	ll        *livelog.Log
	verified  *livelog.Report
	verifyErr error
	here      []livelog.FeedHere
}

// check is one named check. It returns a one-line summary and the findings;
// an error means the check itself could not run, which is a finding too.
type check struct {
	name string
	run  func(c *checker, ctx context.Context) (string, []Finding, error)
	// noVault marks a check that runs even when the vault does not open
	// (it reads files only, through checker.root).
	noVault bool
}

// checks run in this order. Those not marked noVault need an opened vault
// and are skipped while the config does not parse.
var checks = []check{
	{"config", (*checker).config, true},
	{"conflicts", (*checker).conflicts, true}, // sync.go: also explains a config full of markers
	{"key-mode", (*checker).keyModes, false},
	{"key-pair", (*checker).keyPairs, false},
	{"machine", (*checker).machine, false}, // devices.go
	{"locks", (*checker).locks, false},     // before the checks that take locks
	{"log", (*checker).log, false},
	{"forks", (*checker).forks, false},             // feeds.go
	{"cites", (*checker).cites, false},             // feeds.go
	{"synced-keys", (*checker).syncedKeys, false},  // feeds.go
	{"device-name", (*checker).deviceNames, false}, // feeds.go
	{"index", (*checker).index, false},
	{"temp-files", (*checker).tempFiles, false},
	{"review", (*checker).reviews, false},
	{"odd-files", (*checker).oddFiles, false},
	{"ignore-rules", (*checker).ignoreRules, true}, // sync.go
}

// Run checks the vault rooted at dir. It fails only when dir is not a vault
// or ctx ends; every problem inside the vault is a finding in the report.
func Run(ctx context.Context, dir string, opts Options) (*Report, error) {
	opts.defaults()
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("doctor: %w", err)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if st, err := vault.Stat(filepath.Join(root, vault.NexusDir)); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("doctor %s: %w", root, vault.ErrNotVault)
	}
	c := &checker{root: root, opts: opts, stuck: map[string]bool{}}
	c.v, _ = vault.Open(root) // a config that does not parse is the config check's finding
	rep := &Report{Vault: root, OK: true}
	for _, ch := range checks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res := Result{Check: ch.name}
		if c.v == nil && !ch.noVault {
			res.Summary = "skipped (until the config parses)"
			res.OK, res.Skipped = true, true
			rep.Results = append(rep.Results, res)
			continue
		}
		summary, findings, err := ch.run(c, ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			findings = append(findings, Finding{
				Check:     ch.name,
				Problem:   "the check could not run: " + err.Error(),
				Fix:       "fix the cause above, then run " + c.cmd("doctor"),
				Unchecked: true,
			})
			if summary == "" {
				summary = "could not run"
			}
		}
		res.OK = true
		for i := range findings {
			findings[i].Check = ch.name
			if findings[i].Severity != SeverityNote {
				findings[i].Severity = SeverityProblem
				res.OK = false
				rep.Problems++
				if findings[i].Unchecked {
					rep.Unchecked++
				}
			} else {
				rep.Notes++
			}
		}
		res.Summary, res.Findings = summary, findings
		res.Skipped = strings.HasPrefix(summary, "skipped (")
		rep.OK = rep.OK && res.OK
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// cmd renders a nexus command line for this vault.
func (c *checker) cmd(args ...string) string {
	parts := []string{c.opts.Command, "--vault", Quote(c.root)}
	parts = append(parts, args...)
	return strings.Join(parts, " ")
}

// abs returns the absolute OS path of a vault-relative slash path.
func (c *checker) abs(rel string) string { return filepath.Join(c.root, filepath.FromSlash(rel)) }

// rel returns the vault-relative slash path of an absolute path.
func (c *checker) rel(abs string) string {
	r, err := filepath.Rel(c.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}

// Quote quotes s for a POSIX shell (and, for paths without quotes, for
// PowerShell) when it holds anything but plain path characters.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@%=", r) || (runtime.GOOS == "windows" && r == '\\'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// notExist reports whether err says a file does not exist.
func notExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
