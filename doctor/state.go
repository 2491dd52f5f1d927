package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// log verifies the live log and the decision log: signatures and chain.
// Hand-typed unsigned text is counted, not reported: people may write in
// the log.
func (c *checker) log(ctx context.Context) (string, []Finding, error) {
	rep, skip, err := c.verifyLog(ctx)
	if skip != "" || err != nil {
		return skip, nil, err
	}
	// A torn record at the end of a file padded with NUL bytes is one
	// finding, the padding's, whose fix marks the record stepped over.
	torn := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Status == livelog.StatusTruncated && !f.Benign() {
			torn[f.File] = true
		}
	}
	nul, err := c.nulPadded(ctx, rep.Files, torn)
	if err != nil {
		return "", nil, err
	}
	var findings []Finding
	// Keys not pinned here: one finding per writer (feeds.go).
	findings = append(findings, c.unpinned(rep)...)
	for _, f := range rep.Findings {
		if f.Benign() || f.Status == livelog.StatusForked {
			continue // forks: the forks check (feeds.go), one finding per feed
		}
		if f.Status == livelog.StatusKeyChanged || f.Status == livelog.StatusNewWriter {
			continue
		}
		if f.Status == livelog.StatusTruncated && nul.tornTail[f.File] {
			continue
		}
		what := fmt.Sprintf("line %d: entry %s", f.Line, f.Status)
		if f.Agent != "" {
			what += " (" + f.Agent
			if f.Summary != "" {
				what += ": " + clip(f.Summary, 60)
			}
			what += ")"
		}
		if f.Detail != "" {
			what += " — " + f.Detail
		}
		findings = append(findings, Finding{
			Path:    f.File,
			Problem: what,
			Fix:     logFix(c, f),
		})
	}
	findings = append(findings, nul.findings...)
	summary := plural(rep.Entries, "signed entry", "signed entries") + " verified in " + plural(len(rep.Files), "file", "files")
	if n := rep.Counts[livelog.StatusUnsigned]; n > 0 {
		summary += "; " + plural(n, "block", "blocks") + " of hand-typed text (fine)"
	}
	return summary, findings, nil
}

// logFix says how to repair one log finding. Signed entries cannot be
// re-signed by anyone but their agent, so the fix is the file as it was.
func logFix(c *checker, f livelog.Finding) string {
	file := Quote(c.abs(f.File))
	restore := "restore " + f.File + " from a backup (cp BACKUP/" + f.File + " " + file + ") or from version control (git -C " + Quote(c.root) + " checkout -- " + f.File + ")"
	if fix := c.droppedKeyFix(f.Writer); fix != "" && (f.Status == livelog.StatusEdited || f.Status == livelog.StatusForged) {
		return fix
	}
	switch f.Status {
	case livelog.StatusEdited:
		return restore + "; to see exactly what changed: " + c.cmd("log", "verify")
	case livelog.StatusTruncated:
		return restore + " if entries were cut; a crash's torn tail is harmless (the next append starts on a clean line) and is listed by " + c.cmd("log", "verify")
	case livelog.StatusForged:
		return "find who wrote it (" + c.cmd("log", "verify") + ") and " + restore + "; check that .nexus/keys/ is readable only by the agents' owner"
	default:
		return restore + "; details: " + c.cmd("log", "verify")
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// indexWait is how long a watched index may take to catch up before its
// pending files are reported.
const indexWait = 2 * time.Second

// index checks that the search index reflects the markdown on disk.
func (c *checker) index(ctx context.Context) (string, []Finding, error) {
	if !index.Built(c.v) {
		return "not built yet (the first search builds it)", nil, nil
	}
	ix, err := index.Open(c.v, index.Options{Logger: c.opts.Logger, NoServe: true, ReconcileEvery: -1})
	if errors.Is(err, index.ErrBusy) {
		// Another process holds the index and does not answer: the index
		// was not looked at, and rebuilding it would fail the same way.
		return "could not check", []Finding{{
			Path:      vault.IndexDir,
			Problem:   "the search index is held by a process that does not answer: " + err.Error(),
			Fix:       "if that process was stopped (Ctrl-Z, kill -STOP), resume it (fg, or kill -CONT with its pid); if it hangs, end it (kill with its pid); then run " + c.cmd("doctor"),
			Unchecked: true,
		}}, nil
	}
	if err != nil {
		return "", []Finding{{
			Path:    vault.IndexDir,
			Problem: "the search index cannot be opened: " + err.Error(),
			Fix:     c.cmd("index", "rebuild") + " (the index is rebuilt from the markdown; nothing is lost)",
		}}, nil
	}
	defer ix.Close()
	st, err := ix.Status(ctx)
	if err != nil {
		return "", nil, err
	}
	if st.Pending > 0 && st.Watching {
		// A running 'nexus serve' or 'nexus watch' keeps it current: give it
		// a moment.
		t := time.NewTimer(indexWait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", nil, ctx.Err()
		case <-t.C:
		}
		if st, err = ix.Status(ctx); err != nil {
			return "", nil, err
		}
	}
	summary := plural(st.Files, "file", "files") + ", " + plural(int(st.Documents), "document", "documents") + " indexed"
	if st.Watching {
		summary += fmt.Sprintf("; kept current by process %d", st.HolderPID)
	}
	// What the last indexing found odd about files (kept with the index).
	var findings []Finding
	for _, fw := range st.FileWarnings {
		findings = append(findings, Finding{
			Severity: SeverityNote,
			Path:     fw.Path,
			Problem:  "search indexing: " + strings.Join(fw.Warnings, "; "),
			Fix:      "fix or remove the file if it should be searchable (a binary or oversized file is skipped on purpose); the warning goes when the file changes",
		})
	}
	if st.Pending == 0 {
		return summary, findings, nil
	}
	paths := strings.Join(st.PendingPaths, ", ")
	if st.Pending > len(st.PendingPaths) {
		paths += ", …"
	}
	if st.Watching {
		// A holder that watches should have caught up within indexWait.
		return summary, append(findings, Finding{
			Path:    vault.IndexDir,
			Problem: fmt.Sprintf("the search index is stale although process %d watches the vault: %s not in it after %s (%s)", st.HolderPID, plural(st.Pending, "changed file is", "changed files are"), indexWait, paths),
			Fix:     fmt.Sprintf("look at what process %d logged, stop it (kill %d; it is a 'nexus watch', 'nexus serve' or 'nexus index hold'), then run %s", st.HolderPID, st.HolderPID, c.cmd("index", "rebuild")),
		}), nil
	}
	// No watcher: ordinary writes leave the index behind until the next
	// search, which catches up before it answers. Nothing is wrong.
	return summary, append(findings, Finding{
		Severity: SeverityNote,
		Path:     vault.IndexDir,
		Problem:  fmt.Sprintf("the search index is %s behind the markdown (%s); the next search indexes them before it answers", plural(st.Pending, "file", "files"), paths),
		Fix:      "nothing is needed; to catch up now: " + c.cmd("index", "rebuild") + ", or keep it current as files change: " + c.cmd("watch"),
	}), nil
}

// nulPadded reports log files holding NUL bytes. A crash can leave a
// file's end padded with zeros (the size written before the data, as some
// file systems do): a torn tail. The entries around it are intact, but
// search skips a file with NUL bytes as binary. Signed entries never hold
// a NUL, so dropping every NUL byte keeps every entry and its signature.
//
// torn names the files where verification found a torn record; in a file
// whose end is the padding, that record is the one the crash cut (the
// padding's own finding says so, and its fix marks the record stepped
// over, as the next append would).
func (c *checker) nulPadded(ctx context.Context, files []string, torn map[string]bool) (nulReport, error) {
	rep := nulReport{tornTail: map[string]bool{}}
	for _, rel := range files {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		data, err := vault.ReadFile(c.abs(rel))
		if notExist(err) {
			continue
		}
		if err != nil {
			return rep, err
		}
		n := bytes.Count(data, []byte{0})
		if n == 0 {
			continue
		}
		path := c.abs(rel)
		tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-nonul")
		strip := "tr -d '\\000' < " + Quote(path)
		where := "an earlier end of it was" // appends came after the padding
		if len(bytes.TrimRight(data, "\x00\n")) < bytes.LastIndexByte(data, 0) {
			where = "its end is"
			if torn[rel] {
				rep.tornTail[rel] = true
				where = "its last record was cut short and its end is"
				strip = "{ " + strip + "; printf '\\n%s\\n\\n' " + Quote(livelog.TornMarker) + "; }"
			}
		}
		rep.findings = append(rep.findings, Finding{
			Path:    rel,
			Problem: fmt.Sprintf("torn tail: %s padded with %s by a crash; the entries are intact, but search skips the whole file as binary, so none of them can be found", where, plural(n, "NUL byte", "NUL bytes")),
			Fix: strip + " > " + Quote(tmp) + " && mv " + Quote(tmp) + " " + Quote(path) +
				"  # drops only the NUL bytes (and marks a cut record as stepped over, as the next append would): every entry stays and still verifies; run it while no agent appends on this machine",
		})
	}
	return rep, nil
}

// nulReport is what [checker.nulPadded] found.
type nulReport struct {
	findings []Finding
	tornTail map[string]bool // files whose torn record the padding's finding covers
}
