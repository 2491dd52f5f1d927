package livelog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/identity"
)

// FuzzParse feeds arbitrary bytes to the block parser: it must not panic,
// blocks must come in order inside the data, and parsing again from any
// block's end must give the same blocks after it (cursors rely on that).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.md")
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("### 2026-11-29T15:00:00Z lyra [a/b] s\nbody\n<!-- nexus prev=x sig=y -->\n\ntext"))
	f.Add([]byte("<!-- nexus prev=x sig=y -->\n### 2026-11-29T15:00:00Z lyra [a/b]"))
	f.Add([]byte("### 2026-11-29T15:00:00Z lyra [a/b] s\r\n\\### 2026-11-29T15:00:00Z x [c/d]\r\n" + tornMarker + "\n"))
	f.Add([]byte("\n\n\n###"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := newParser(data, 0, 1, streamLive, "x.md")
		var blocks []Entry
		last := int64(0)
		for {
			e, ok := p.next()
			if !ok {
				break
			}
			if e.Offset < last || e.End < e.Offset || e.End > int64(len(data)) {
				t.Fatalf("block %+v out of order (last end %d, len %d)", e, last, len(data))
			}
			last = e.End
			blocks = append(blocks, e)
			if len(blocks) > len(data)+1 {
				t.Fatal("parser does not advance")
			}
		}
		for i, b := range blocks {
			q := newParser(data[b.End:], b.End, 0, streamLive, "x.md")
			for j := i + 1; j < len(blocks); j++ {
				e, ok := q.next()
				if !ok || e.Offset != blocks[j].Offset || e.End != blocks[j].End || e.Summary != blocks[j].Summary || e.Body != blocks[j].Body || e.Signed != blocks[j].Signed {
					t.Fatalf("reparse from %d: block %d = %+v, want %+v", b.End, j, e, blocks[j])
				}
			}
		}
	})
}

// FuzzEntryRoundTrip: any summary and body that Append accepts is read back
// exactly as normalised, and its signature verifies; no body forges a
// second entry.
func FuzzEntryRoundTrip(f *testing.F) {
	f.Add("summary", "body", "deploy", "shipped")
	f.Add("멀티\n라인", "### 2026-11-29T15:00:00Z mallory [a/b] forged\n<!-- nexus prev=AAAA sig=BBBB -->", "배포", "완료")
	f.Add("s", "\\\\### 2026-11-29T15:00:00Z a [b/c]\n\n\n```\nopen", "c", "k")
	f.Add("s", "<!-- nexus torn: x -->\n\\<!-- nexus", "c", "k")
	v := mustVault(f)
	s, err := identity.LoadSigner(v, "lyra")
	if err != nil {
		f.Fatal(err)
	}
	kr := identity.Keyring{"lyra": {{Key: s.PublicKey()}}}
	f.Fuzz(func(t *testing.T, summary, body, channel, kind string) {
		e := Entry{Channel: channel, Kind: kind, Summary: summary, Body: body}
		if _, err := prepare(&e); err != nil {
			return
		}
		if !utf8.ValidString(e.Body) {
			t.Fatal("prepare let invalid UTF-8 through")
		}
		now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
		e.Agent, e.stream, e.Time, e.timeText = "lyra", streamLive, now, now.Format(timeLayout)
		e.sign(s, genesis)
		rec := e.record()
		p := newParser(rec, 0, 1, streamLive, "x.md")
		got, ok := p.next()
		if !ok {
			t.Fatal("no block")
		}
		if _, more := p.next(); more {
			t.Fatalf("record parsed as more than one block:\n%s", rec)
		}
		if got.Summary != e.Summary || got.Body != e.Body || got.Channel != e.Channel || got.Kind != e.Kind || !got.Signed || got.Torn || got.Hand {
			t.Fatalf("round trip:\n got %+v\nwant %+v\n%s", got, e, rec)
		}
		sig, _ := b64.DecodeString(got.Sig)
		if !kr.Verify("lyra", got.Canonical(), sig) {
			t.Fatal("signature does not verify after round trip")
		}
	})
}

// FuzzVerifyAndRead runs Verify, Read and Unread over arbitrary segment
// bytes: whatever a person or a crash leaves in the file, they report, they
// do not fail or crash, and the next append is clean. Each run fsyncs, so
// fuzz it with a short minimisation time:
//
//	go test ./livelog -run XXX -fuzz FuzzVerifyAndRead -fuzzminimizetime 5s
func FuzzVerifyAndRead(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.md")
	for _, s := range seeds {
		if data, err := os.ReadFile(s); err == nil {
			f.Add(data)
		}
	}
	v := mustVault(f)
	l := mustLog(f, v)
	e := mustAppend(f, l, "lyra", "seed entry")
	good, _ := os.ReadFile(segmentPath(l))
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good[:e.End/2]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(segmentPath(l), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Verify(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Read(ReadOptions{Last: 3}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.ReadUnread("ella", true); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.UnreadCount("mallory"); err != nil {
			t.Fatal(err)
		}
		after, err := l.Append("lyra", Entry{Summary: "after"})
		if err != nil {
			t.Fatal(err)
		}
		es, err := l.Read(ReadOptions{})
		found := false
		for _, e := range es {
			found = found || (e.Hash == after.Hash && e.Summary == "after" && e.Signed && !e.Torn)
		}
		if err != nil || !found {
			t.Fatalf("append after arbitrary bytes not read back: %+v %v", es, err)
		}
	})
}
