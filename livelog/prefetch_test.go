package livelog

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestChunksParsedAheadMatchWholeFiles: a read over feed files of several
// chunks (whose next chunk is parsed on another goroutine while one is
// merged) delivers, file by file, exactly the blocks a parse of each
// whole file finds, in its order, with their places, hashes and bodies;
// reading again after the iterators were closed half way (a limit) and
// counting the rest gives the same.
func TestChunksParsedAheadMatchWholeFiles(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	body := strings.Repeat("a body line that makes the entry long enough\n", 5)
	for round := range 6 {
		for _, agent := range []string{"lyra", "ella", "mallory"} {
			es := make([]Entry, 700)
			for i := range es {
				es[i] = Entry{Channel: "c", Kind: "k", Summary: fmt.Sprintf("%s %d-%d", agent, round, i), Body: body}
			}
			if _, err := l.AppendBatch(agent, es); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, err := l.liveFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]Entry{}
	for _, lf := range files {
		data, err := os.ReadFile(l.abs(lf.rel))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 3*iterChunk {
			t.Fatalf("%s is %d bytes: not enough chunks to parse ahead", lf.rel, len(data))
		}
		p := newParser(data, 0, 1, streamLive, lf.rel)
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			want[lf.rel] = append(want[lf.rel], e)
		}
	}
	for _, limit := range []int{-1, 5000} {
		got := map[string][]Entry{}
		n, err := l.eachUnread("quinn", false, limit, func(e Entry) error {
			got[e.Segment] = append(got[e.Segment], e)
			return nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for rel, ws := range want {
			total += len(ws)
			gs := got[rel]
			if limit < 0 && len(gs) != len(ws) {
				t.Fatalf("limit %d: %s: %d blocks, want %d", limit, rel, len(gs), len(ws))
			}
			for i, g := range gs {
				w := ws[i]
				if g.Offset != w.Offset || g.End != w.End || g.Line != w.Line || g.Hash != w.Hash || g.Body != w.Body || g.Summary != w.Summary || g.Seq != w.Seq {
					t.Fatalf("limit %d: %s block %d: got %d-%d line %d seq %d %q, want %d-%d line %d seq %d %q", limit, rel, i, g.Offset, g.End, g.Line, g.Seq, g.Summary, w.Offset, w.End, w.Line, w.Seq, w.Summary)
				}
			}
		}
		if n != total {
			t.Fatalf("limit %d: %d counted, want %d", limit, n, total)
		}
	}
}
