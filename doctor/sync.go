package doctor

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/conflicts"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// conflicts reports what sync tools leave behind: conflict copies
// (Syncthing, Dropbox, iCloud, git mergetool) anywhere in the vault, git
// conflict markers inside Nexus's files and every markdown note, and
// conflicts filed for a person that wait in review/pending/. It runs
// without an opened vault: a config.yaml full of markers is one of the
// things it finds.
func (c *checker) conflicts(ctx context.Context) (string, []Finding, error) {
	found, err := conflicts.FindIn(c.root, conflicts.ScanOptions{Notes: true})
	if err != nil {
		return "", nil, err
	}
	var findings []Finding
	for _, cf := range found {
		findings = append(findings, c.conflictFinding(cf))
	}
	waiting := 0
	if c.v != nil {
		items, err := retention.List(c.v, retention.Filter{})
		if err != nil {
			return "", nil, err
		}
		for _, it := range items {
			if it.Kind != retention.KindConflict || it.Status != retention.StatusPending {
				continue
			}
			waiting++
			findings = append(findings, Finding{
				// Nothing is broken meanwhile: the file holds one version.
				Severity: SeverityNote,
				Path:     it.Path,
				Problem:  fmt.Sprintf("%s has two versions that need a person's choice (the file keeps one; the other is %s)", it.Target, it.Provenance.Source),
				Fix:      "keep the other version: " + c.cmd("review", "approve", it.ID) + "; keep the file as it is: " + c.cmd("review", "reject", it.ID) + " (or set status: in Obsidian)",
			})
		}
	}
	summary := "no conflict copies or conflict markers"
	if len(found) > 0 || waiting > 0 {
		summary = plural(len(found), "conflict copy or file with conflict markers", "conflict copies or files with conflict markers") + ", " + plural(waiting, "conflict", "conflicts") + " waiting for a person"
	}
	return summary, findings, nil
}

func (c *checker) conflictFinding(cf conflicts.Conflict) Finding {
	f := Finding{Path: cf.Path}
	what := "a conflict copy of " + cf.Original + " left by " + engineName(cf.Engine)
	switch {
	case cf.Engine == "sync":
		what = "a pending review item that was already decided (" + cf.Original + "): a sync tool brought its pending file back"
	case cf.Markers && cf.Malformed:
		what = "git conflict markers that are not well formed (a block lacks its ======= or >>>>>>> line)"
	case cf.Markers:
		what = "git conflict markers (<<<<<<< ======= >>>>>>>) left by a merge"
	case cf.OriginalMissing:
		what += "; the original is gone"
	}
	switch {
	case cf.Mergeable():
		f.Problem = what
		f.Fix = c.cmd("doctor", "--fix") + " (merges both versions without loss, files what needs a choice in review/pending/; a running 'nexus serve' or 'nexus watch' does it within seconds)"
	case cf.File == conflicts.FileFeed && c.deviceSettled(feedDevice(cf.Original)):
		// Both versions are read as the feed's two branches; the
		// machines have names of their own since (devices.go).
		f.Severity = SeverityNote
		f.Problem = what + "; two machines appended as one writer until one of them took a name of its own: both files are read as the feed's two branches"
		f.Fix = "nothing: keep both files (deleting either loses the entries only it holds)"
	case cf.File == conflicts.FileFeed:
		f.Problem = what + "; a log feed has one writer, so a second version means the same writer appended on two machines"
		f.Fix = "keep both files (nothing is lost); give each machine its own device name with " + c.cmd("device", "name", "NAME") + ", and see " + c.cmd("log", "verify")
	case cf.Markers:
		f.Problem = what
		f.Fix = "edit " + Quote(c.abs(cf.Path)) + " by hand: keep what you want of each side and delete the marker lines"
	default:
		f.Problem = what
		f.Fix = "merge it by hand into " + Quote(c.abs(cf.Original)) + ", then delete " + Quote(c.abs(cf.Path))
	}
	return f
}

func engineName(e string) string {
	switch e {
	case vault.EngineSyncthing:
		return "Syncthing"
	case vault.EngineDropbox:
		return "Dropbox (or Nextcloud)"
	case vault.EngineNumbered:
		return "a sync tool or Finder (a numbered duplicate)"
	case vault.EngineGit:
		return "git"
	}
	return e
}

// ignoreRules reports ignore files that lack Nexus's rules for what is
// machine-local, for the engines found around the vault: git (a .git at or
// above it) and Syncthing (a .stfolder marker). Without the rules, keys
// travel to every copy and two machines' cursors, witnesses and indexes
// overwrite each other.
func (c *checker) ignoreRules(ctx context.Context) (string, []Finding, error) {
	targets, err := vault.CheckIgnoreRules(c.root)
	if err != nil {
		return "", nil, err
	}
	var findings []Finding
	var engines []string
	for _, t := range targets {
		if !t.Active {
			continue
		}
		engines = append(engines, t.Engine)
		if len(t.Missing) == 0 {
			continue
		}
		findings = append(findings, Finding{
			Path:    c.rel(t.Path),
			Problem: fmt.Sprintf("%s does not exclude what must stay on this machine: %s", filepath.Base(t.Path), strings.Join(t.Missing, ", ")),
			Fix:     c.cmd("doctor", "--fix") + " (appends a marked block; your own lines stay as they are)",
		})
	}
	if len(engines) == 0 {
		return "no git repository or Syncthing folder around the vault", findings, nil
	}
	return "ignore rules checked for " + strings.Join(dedupe(engines), " and "), findings, nil
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// FixReport says what [Fix] changed.
type FixReport struct {
	// IgnoreFiles are the ignore files written (absolute paths).
	IgnoreFiles []string `json:"ignore_files"`
	// ConfigSetAside is the version of .nexus/config.yaml holding conflict
	// markers that was set aside so the vault opens, or "".
	ConfigSetAside string `json:"config_set_aside,omitempty"`
	// Conflicts is what conflict resolution did.
	Conflicts conflicts.Report `json:"conflicts"`
	// Reviews are the decisions people made in Obsidian (status: approved
	// or rejected) that were carried out, as the keeper of serve and watch
	// does.
	Reviews retention.ReconcileResult `json:"reviews"`
	// RestoredKeys are this machine's device keys put back into
	// IDENTITY.md after a merge dropped them ([identity.RestoreKeysQuietly]).
	RestoredKeys []identity.DroppedKey `json:"restored_keys,omitempty"`
}

// Fix repairs what a sync tool can break and needs no judgement, for
// 'nexus doctor --fix': a config.yaml holding git conflict markers is set
// aside and its first side put in place ([vault.SetAsideConflictedConfig]),
// the ignore rules are written ([vault.EnsureIgnoreRules]), and conflict
// copies and markers are merged or filed for a person
// ([conflicts.Resolve]); this machine's device keys a merge dropped from
// IDENTITY.md are listed again ([identity.RestoreKeysQuietly]); then the
// decisions people made in Obsidian are carried out ([retention.Reconcile]). Everything else doctor
// finds needs a person or another command.
func Fix(ctx context.Context, dir string, opts Options) (*FixReport, error) {
	opts.defaults()
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("doctor --fix: %w", err)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	rep := &FixReport{IgnoreFiles: []string{}}
	if rep.ConfigSetAside, err = vault.SetAsideConflictedConfig(root); err != nil {
		return rep, err
	}
	v, err := vault.Open(root)
	if err != nil {
		return rep, err
	}
	if rep.IgnoreFiles, err = vault.EnsureIgnoreRules(root); err != nil {
		return rep, err
	}
	if rep.IgnoreFiles == nil {
		rep.IgnoreFiles = []string{}
	}
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if rep.Conflicts, err = conflicts.Resolve(tctx, v, opts.Now()); err != nil {
		return rep, err
	}
	// After the merge of IDENTITY.md conflicts: a key of this machine the
	// merge dropped is listed again.
	rep.RestoredKeys = identity.RestoreKeysQuietly(v)
	// After the merge: a decision that came in a conflict copy is carried
	// out now, once.
	rep.Reviews, err = retention.Reconcile(v, opts.Now())
	return rep, err
}
