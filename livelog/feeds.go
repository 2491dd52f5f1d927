package livelog

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// DecisionsDir holds the decision feeds, one file per writer.
const DecisionsDir = "log/decisions"

// FeedPath returns the vault-relative file a writer appends to in t's
// month: log/live/YYYY-MM/WRITER.md.
func FeedPath(writer string, t time.Time) string {
	return vault.LiveLogDir + "/" + t.UTC().Format("2006-01") + "/" + writer + ".md"
}

// DecisionFeedPath returns a writer's decision feed:
// log/decisions/WRITER.md.
func DecisionFeedPath(writer string) string { return DecisionsDir + "/" + writer + ".md" }

// logFile is one file of the log: a feed file (of a writer, or a file a
// person or a sync tool put in a month folder), or a segment of an older
// vault's single chain.
type logFile struct {
	rel    string
	writer string // the writer its name says (AGENT@DEVICE), or ""
	legacy bool   // log/live/YYYY-MM.md or log/decisions.md
	month  string // "2026-12" for live files; "" for decision files
}

// writerOfName returns the writer a feed file's base name names.
func writerOfName(base string) string {
	w, ok := strings.CutSuffix(base, ".md")
	if ok && ValidWriter(w) {
		return w
	}
	return ""
}

func isMonth(s string) bool {
	if len(s) != len("2006-01") {
		return false
	}
	_, err := time.Parse("2006-01", s)
	return err == nil
}

// isLogFile reports whether rel is a file of the live log or the decision
// log that Nexus reads. Paths from state files are checked with it.
func isLogFile(rel string) bool {
	if rel == vault.DecisionsLog {
		return true
	}
	if name, ok := strings.CutPrefix(rel, DecisionsDir+"/"); ok {
		return !strings.Contains(name, "/") && strings.HasSuffix(name, ".md") && !strings.HasPrefix(name, ".")
	}
	name, ok := strings.CutPrefix(rel, vault.LiveLogDir+"/")
	if !ok {
		return false
	}
	if m, ok := strings.CutSuffix(name, ".md"); ok && isMonth(m) {
		return true
	}
	m, base, ok := strings.Cut(name, "/")
	return ok && isMonth(m) && !strings.Contains(base, "/") && strings.HasSuffix(base, ".md") && !strings.HasPrefix(base, ".")
}

// liveFiles lists the live log's files: older single-chain segments
// first (in month order), then the feed files, by month then name.
func (l *Log) liveFiles() ([]logFile, error) {
	des, err := l.readDir(vault.LiveLogDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the live log: %w", err)
	}
	var legacy, feeds []logFile
	for _, de := range des {
		name := de.nfc
		if m, ok := strings.CutSuffix(name, ".md"); ok && isMonth(m) && de.regular {
			legacy = append(legacy, logFile{rel: vault.LiveLogDir + "/" + de.name, legacy: true, month: m})
			continue
		}
		if !de.dir || !isMonth(name) {
			continue
		}
		sub, err := l.readDir(vault.LiveLogDir + "/" + de.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing above
		}
		if err != nil {
			return nil, fmt.Errorf("list the live log: %w", err)
		}
		for _, f := range sub {
			base := f.name
			if !f.regular || !strings.HasSuffix(base, ".md") || strings.HasPrefix(base, ".") {
				continue
			}
			feeds = append(feeds, logFile{rel: vault.LiveLogDir + "/" + de.name + "/" + base, writer: writerOfName(base), month: name})
		}
	}
	sort.Slice(legacy, func(i, j int) bool { return legacy[i].rel < legacy[j].rel })
	sort.Slice(feeds, func(i, j int) bool { return feeds[i].rel < feeds[j].rel })
	return append(legacy, feeds...), nil
}

// streamFiles lists the files of a stream: the live log's or the
// decision log's.
func (l *Log) streamFiles(stream string) ([]logFile, error) {
	if stream == streamLive {
		return l.liveFiles()
	}
	return l.decisionFiles()
}

// decisionFiles lists the decision log's files: the older
// log/decisions.md if present, then the decision feeds by name.
func (l *Log) decisionFiles() ([]logFile, error) {
	var out []logFile
	if st, err := vault.Stat(l.abs(vault.DecisionsLog)); err == nil && st.Mode().IsRegular() {
		out = append(out, logFile{rel: vault.DecisionsLog, legacy: true})
	}
	des, err := l.readDir(DecisionsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list decisions: %w", err)
	}
	var feeds []logFile
	for _, de := range des {
		base := de.name
		if !de.regular || !strings.HasSuffix(base, ".md") || strings.HasPrefix(base, ".") {
			continue
		}
		feeds = append(feeds, logFile{rel: DecisionsDir + "/" + base, writer: writerOfName(base)})
	}
	sort.Slice(feeds, func(i, j int) bool { return feeds[i].rel < feeds[j].rel })
	return append(out, feeds...), nil
}

// Writer returns the writer agent appends as on this machine:
// AGENT@DEVICE.
func (l *Log) Writer(agent string) (string, error) {
	d, err := l.device()
	if err != nil {
		return "", err
	}
	return agent + "@" + d, nil
}

// device is the vault's device name, read again only when its file
// changed (a stat instead of a read per append): 'nexus device name' in
// another process is seen by the next append.
func (l *Log) device() (string, error) {
	st, serr := vault.Stat(l.abs(vault.DeviceFile))
	var stamp idStamp
	if serr == nil {
		stamp = idStamp{ino: fileID(st), size: st.Size(), mtime: st.ModTime()}
		l.devMu.Lock()
		d, ok := l.dev, l.dev != "" && l.devStamp == stamp
		l.devMu.Unlock()
		if ok {
			return d, nil
		}
	}
	d, err := l.v.Device()
	if err == nil && serr == nil {
		l.devMu.Lock()
		l.dev, l.devStamp = d, stamp
		l.devMu.Unlock()
	}
	return d, err
}
