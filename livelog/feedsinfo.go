package livelog

import (
	"context"
	"errors"
	"io/fs"
	"sort"
	"time"
)

// FeedInfo describes one feed for 'nexus log feeds'.
type FeedInfo struct {
	// Log is "live" or "decisions".
	Log    string   `json:"log"`
	Writer string   `json:"writer"`
	Files  []string `json:"files"`
	// Entries counts the feed's signed entries (copies in conflict files
	// once).
	Entries int `json:"entries"`
	Head    struct {
		Seq  int64     `json:"seq"`
		Time time.Time `json:"time,omitzero"`
		Hash string    `json:"hash,omitempty"`
	} `json:"head"`
	// SeenHere is the highest entry this machine's witness saw of the
	// feed: above Head.Seq, entries were removed here.
	SeenHere int64 `json:"seen_here"`
	// CitedBy names the other feeds that cite this one, with the highest
	// entry each cites.
	CitedBy []Cite `json:"cited_by,omitempty"`
}

// Feeds lists every feed of the live log and the decision log, by log
// and writer. It reads every feed file once.
func (l *Log) Feeds(ctx context.Context) ([]FeedInfo, error) {
	out := []FeedInfo{}
	for _, stream := range []string{streamLive, streamDecisions} {
		files, err := l.streamFiles(stream)
		if err != nil {
			return nil, err
		}
		if _, err := l.refresh(stream, files); err != nil && !errors.Is(err, errWitnessReadOnly) {
			return nil, err // read-only: each feed's witness as recorded before
		}
		wit := l.loadWitness()
		t := feedTally{stream: stream, byWriter: map[string]*FeedInfo{}, hashes: map[string]bool{}, cited: map[string]map[string]int64{}}
		for _, lf := range files {
			if lf.legacy {
				continue
			}
			if err := l.tallyFile(ctx, &t, lf.rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		out = append(out, t.feeds(wit)...)
	}
	return out, nil
}

// feedTally is what [Log.Feeds] gathers of one stream's feeds.
type feedTally struct {
	stream   string
	byWriter map[string]*FeedInfo
	hashes   map[string]bool             // entries counted (copies once)
	cited    map[string]map[string]int64 // cited writer -> citing writer -> seq
}

func (t *feedTally) get(w string) *FeedInfo {
	fi := t.byWriter[w]
	if fi == nil {
		fi = &FeedInfo{Log: t.stream, Writer: w}
		t.byWriter[w] = fi
	}
	return fi
}

// tallyFile counts the signed feed entries of one file.
func (l *Log) tallyFile(ctx context.Context, t *feedTally, rel string) error {
	it, err := l.openIter(rel, t.stream, 0, false)
	if err != nil {
		return err
	}
	defer it.close()
	inFile := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		e, ok, err := it.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if !e.Signed || !e.feed || e.Torn {
			continue
		}
		fi := t.get(e.Writer)
		if !inFile[e.Writer] {
			inFile[e.Writer] = true
			fi.Files = append(fi.Files, rel)
		}
		if t.hashes[e.Hash] {
			continue
		}
		t.hashes[e.Hash] = true
		fi.Entries++
		if e.Seq > fi.Head.Seq {
			fi.Head.Seq, fi.Head.Time, fi.Head.Hash = e.Seq, e.Time, e.Hash
		}
		for _, c := range e.Cites {
			m := t.cited[c.Writer]
			if m == nil {
				m = map[string]int64{}
				t.cited[c.Writer] = m
			}
			m[e.Writer] = max(m[e.Writer], c.Seq)
		}
	}
}

// feeds lists the tallied feeds and those only the witness (wit) knows,
// by writer.
func (t *feedTally) feeds(wit witness) []FeedInfo {
	for w := range wit.Feeds[t.stream] {
		t.get(w)
	}
	var ws []string
	for w, fi := range t.byWriter {
		ws = append(ws, w)
		fi.SeenHere = wit.get(t.stream, w).Seq
		for by, seq := range t.cited[w] {
			fi.CitedBy = append(fi.CitedBy, Cite{Writer: by, Seq: seq})
		}
		sort.Slice(fi.CitedBy, func(i, j int) bool { return fi.CitedBy[i].Writer < fi.CitedBy[j].Writer })
		if fi.Files == nil {
			fi.Files = []string{}
		}
	}
	sort.Strings(ws)
	out := make([]FeedInfo, 0, len(ws))
	for _, w := range ws {
		out = append(out, *t.byWriter[w])
	}
	return out
}
