package livelog

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/nexus-memory/nexus/vault"
)

// TimelineFile is the derived, readable timeline of recent entries of all
// feeds, merged, for Obsidian. It is machine-local (each machine writes
// its own from the feeds it holds) and must not be synced: sync tools are
// told to skip it (see docs/operations.md, "The timeline").
const TimelineFile = vault.TimelineFile

// DefaultTimelineEntries is how many entries the timeline shows.
const DefaultTimelineEntries = 200

// Timeline renders the newest n entries of the live log (all feeds,
// merged, oldest first) as one markdown note: a heading per day, one
// line per entry with its writer, channel/kind and summary, the body
// indented under it. Quarantined entries show their notice. It reads the
// feeds backwards, so the cost depends on n, not on the log's size.
func (l *Log) Timeline(n int) (string, error) {
	text, _, err := l.timeline(n)
	return text, err
}

// timeline is [Log.Timeline] and the number of entries it shows.
func (l *Log) timeline(n int) (string, int, error) {
	if n <= 0 {
		n = DefaultTimelineEntries
	}
	es, err := l.Read(ReadOptions{Last: n})
	if err != nil {
		return "", 0, err
	}
	var b strings.Builder
	b.WriteString("---\nnexus: derived timeline of this machine's copy of the log (regenerated; do not edit, do not sync)\n---\n")
	fmt.Fprintf(&b, "# Live log timeline\n\nThe newest %d entries of every feed, merged in the log's order. Entries live in [[log/live]]; this note is rebuilt by `nexus watch`, `nexus serve` and `nexus log timeline`.\n", len(es))
	day := ""
	for _, e := range es {
		e = e.Masked()
		if !e.Time.IsZero() {
			if d := e.Time.UTC().Format("2006-01-02"); d != day {
				day = d
				fmt.Fprintf(&b, "\n## %s\n\n", d)
			}
		} else if day == "" {
			b.WriteString("\n")
		}
		switch {
		case e.Hand:
			fmt.Fprintf(&b, "- *(typed by hand in %s)* %s\n", e.Segment, oneLine(clip(e.Body, 300)))
			continue
		case !e.Signed:
			fmt.Fprintf(&b, "- %s **%s** *(unsigned)* `%s/%s` %s\n", e.Time.UTC().Format("15:04:05"), e.Agent, e.Channel, e.Kind, e.Summary)
		default:
			fmt.Fprintf(&b, "- %s **%s** `%s/%s` %s\n", e.Time.UTC().Format("15:04:05"), e.Writer, e.Channel, e.Kind, e.Summary)
		}
		if e.Body != "" {
			for _, line := range strings.Split(clip(e.Body, 2000), "\n") {
				fmt.Fprintf(&b, "    %s\n", line)
			}
		}
	}
	return b.String(), len(es), nil
}

// TimelineWrite is what [Log.WriteTimeline] did.
type TimelineWrite struct {
	// Path is the timeline's vault-relative path.
	Path string `json:"path"`
	// Entries is how many entries it shows.
	Entries int `json:"entries"`
	// Changed reports whether the file was written: false when it already
	// held exactly this text, or when the log is empty and there was no
	// timeline yet (a fresh vault gets no log/ folder from it).
	Changed bool `json:"changed"`
}

// WriteTimeline writes [Log.Timeline] to log/timeline.local.md
// atomically, only if its text changed, so a keeper may call it often
// without rewriting the file (or waking sync tools and Obsidian) when
// nothing new arrived.
func (l *Log) WriteTimeline(n int) (TimelineWrite, error) {
	res := TimelineWrite{Path: TimelineFile}
	text, count, err := l.timeline(n)
	if err != nil {
		return res, err
	}
	res.Entries = count
	path, err := l.v.Path(TimelineFile)
	if err != nil {
		return res, err
	}
	old, err := vault.ReadFile(path)
	switch {
	case err == nil && string(old) == text:
		return res, nil
	case errors.Is(err, fs.ErrNotExist) && count == 0:
		return res, nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return res, fmt.Errorf("read %s: %w", TimelineFile, err)
	}
	if err := vault.WriteFile(path, []byte(text), 0o644); err != nil {
		return res, fmt.Errorf("write %s: %w", TimelineFile, err)
	}
	res.Changed = true
	return res, nil
}
