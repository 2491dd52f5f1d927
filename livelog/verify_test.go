package livelog

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/nexus-memory/nexus/identity"
)

// tamperLog makes a vault where lyra wrote five entries (A-E) into her
// feed, with ella's entries in between in hers, and returns the log,
// lyra's feed file and lyra's entries.
func tamperLog(t *testing.T) (*Log, string, []Entry) {
	t.Helper()
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 5 {
		if _, err := l.Append("lyra", Entry{Channel: "deploy", Kind: "note", Summary: "entry " + string(rune('A'+i)), Body: "body of entry"}); err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, "ella", "ella "+string(rune('a'+i)))
	}
	es, err := l.Read(ReadOptions{From: "lyra"})
	if err != nil || len(es) != 5 {
		t.Fatalf("read: %v %d", err, len(es))
	}
	return l, segmentPath(l), es
}

func TestVerifyTampering(t *testing.T) {
	cases := []struct {
		name    string
		tamper  func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte
		want    Status
		wantSum string // summary of the entry named, "" to skip
		strict  bool   // OK(false) must still be true (only hand text)
	}{
		{"summary byte edited", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return []byte(strings.Replace(string(data), "] entry C", "] entry X", 1))
		}, StatusEdited, "entry X", false},
		{"body edited", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			off := es[1].Offset + int64(strings.Index(string(data[es[1].Offset:]), "body of"))
			data[off] = 'B'
			return data
		}, StatusEdited, "entry B", false},
		{"entry deleted", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return append(append([]byte{}, data[:es[2].Offset]...), data[es[2].End:]...)
		}, StatusRemoved, "", false},
		{"two entries swapped", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			a, b := data[es[1].Offset:es[1].End], data[es[2].Offset:es[2].End]
			out := append([]byte{}, data[:es[1].Offset]...)
			out = append(out, b...)
			out = append(out, a...)
			return append(out, data[es[2].End:]...)
		}, StatusReordered, "entry B", false},
		{"re-signed with another agent's key", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			m, err := identity.LoadSigner(l.v, "mallory")
			if err != nil {
				t.Fatal(err)
			}
			e := es[3]
			forged := b64.EncodeToString(m.Sign(e.Canonical()))
			return []byte(strings.Replace(string(data), e.Sig, forged, 1))
		}, StatusForged, "entry D", false},
		{"truncated mid-entry", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return data[:es[4].Offset+30]
		}, StatusTruncated, "", false},
		{"last entry cut off cleanly", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return data[:es[4].Offset]
		}, StatusRemoved, "", false},
		{"header damaged", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return []byte(strings.Replace(string(data), "lyra [deploy/note] entry B", "lyra [deploy note] entry B", 1))
		}, StatusEdited, "", false},
		{"signature line damaged", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return []byte(strings.Replace(string(data), es[1].Sig+" -->", es[1].Sig+" --", 1))
		}, StatusEdited, "entry B", false},
		{"hand-typed paragraph at the end", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			return append(data, "A note typed in Obsidian.\nIt has two lines."...)
		}, StatusUnsigned, "", true},
		{"hand-typed paragraph in the middle", func(t *testing.T, l *Log, path string, data []byte, es []Entry) []byte {
			out := append([]byte{}, data[:es[2].Offset]...)
			out = append(out, "Person's remark between entries.\n\n"...)
			return append(out, data[es[2].Offset:]...)
		}, StatusUnsigned, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, path, es := tamperLog(t)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.tamper(t, l, path, data, es), 0o644); err != nil {
				t.Fatal(err)
			}
			r := mustVerify(t, l)
			found := false
			for _, f := range r.Findings {
				if f.Status == c.want && (c.wantSum == "" || f.Summary == c.wantSum) {
					found = true
				}
			}
			if !found {
				t.Fatalf("no %s finding (summary %q) in %+v", c.want, c.wantSum, r.Findings)
			}
			if r.OK(true) {
				t.Fatal("strict verify passed a tampered log")
			}
			if r.OK(false) != c.strict {
				t.Fatalf("OK(false) = %v, want %v; findings %+v", r.OK(false), c.strict, r.Findings)
			}
			if c.strict {
				// Hand text never makes the agent entries fail.
				if r.Counts[StatusIntact] != 10 || r.Counts[StatusUnsigned] != 1 {
					t.Fatalf("counts %v", r.Counts)
				}
				es, err := l.Read(ReadOptions{})
				if err != nil || len(es) != 11 {
					t.Fatalf("read shows %d blocks (%v), want 11", len(es), err)
				}
				// The next append chains on and verifies.
				mustAppend(t, l, "lyra", "after the hand text")
				if r := mustVerify(t, l); !r.OK(false) || r.Counts[StatusIntact] != 11 {
					t.Fatalf("after append: %+v", r)
				}
			}
		})
	}
}

// TestTornTailStepOver appends after a feed that a crash left torn: a
// record written in part and never acknowledged.
func TestTornTailStepOver(t *testing.T) {
	l, path, es := tamperLog(t)
	data, _ := os.ReadFile(path)
	// The crashed append's partial record: a copy of E's text, cut.
	rec := string(data[es[4].Offset:es[4].End])
	appendRaw(t, path, strings.Replace(rec, "entry E", "entry F", 1)[:60])
	r, err := l.AppendDetailed("lyra", Entry{Summary: "after the crash"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.SteppedOverTornTail || r.Entry.Seq != 6 {
		t.Fatalf("torn tail not reported, or seq %d", r.Entry.Seq)
	}
	rep := mustVerify(t, l)
	if rep.Counts[StatusTruncated] != 1 || rep.Counts[StatusIntact] != 11 {
		t.Fatalf("verify after step-over: %v %+v", rep.Counts, rep.Findings)
	}
	// The stepped-over tail is listed, but only strict verification fails
	// on it: otherwise one crash would fail verify forever.
	if !rep.OK(false) || rep.OK(true) || !rep.Findings[0].Recovered {
		t.Fatalf("recovered torn tail: ok=%v strict=%v %+v", rep.OK(false), rep.OK(true), rep.Findings)
	}
	got, _ := l.Read(ReadOptions{Last: 1})
	if len(got) != 1 || got[0].Summary != "after the crash" {
		t.Fatalf("last entry %v", summaries(got))
	}
	// Only one torn finding, however many appends follow.
	mustAppend(t, l, "lyra", "again")
	if rep := mustVerify(t, l); rep.Counts[StatusTruncated] != 1 {
		t.Fatalf("counts %v", rep.Counts)
	}
	// A hand-typed line without a final newline is not torn.
	appendRaw(t, path, "typed without newline")
	if rep := mustVerify(t, l); rep.Counts[StatusUnsigned] != 1 || rep.Counts[StatusTruncated] != 1 {
		t.Fatalf("counts %v", rep.Counts)
	}
	res, err := l.AppendDetailed("lyra", Entry{Summary: "clean line"})
	if err != nil || res.SteppedOverTornTail {
		t.Fatalf("hand text treated as torn: %v %+v", err, res)
	}
	if rep := mustVerify(t, l); rep.Counts[StatusIntact] != 13 {
		t.Fatalf("counts %v %+v", rep.Counts, rep.Findings)
	}
	// A final record whose newline was trimmed (an editor, a sync tool) is
	// complete: the next append neither forks nor marks it torn.
	data, _ = os.ReadFile(path)
	os.WriteFile(path, []byte(strings.TrimRight(string(data), "\n")), 0o644)
	res, err = l.AppendDetailed("lyra", Entry{Summary: "after a trimmed newline"})
	if err != nil || res.SteppedOverTornTail {
		t.Fatalf("trimmed newline: %v %+v", err, res)
	}
	if rep := mustVerify(t, l); rep.Counts[StatusIntact] != 14 || rep.Counts[StatusForked] != 0 || rep.Counts[StatusTruncated] != 1 {
		t.Fatalf("counts %v %+v", rep.Counts, rep.Findings)
	}
}

// TestStaleHeadFile: the feed hint lost (crash before its update),
// stale or garbage; appends still number and chain correctly.
func TestStaleHeadFile(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	hint := v.MustPath(hintPath(streamLive, "lyra@"+testDevice))
	mustAppend(t, l, "lyra", "one")
	stale, _ := os.ReadFile(hint)
	mustAppend(t, l, "lyra", "two")
	if err := os.WriteFile(hint, stale, 0o644); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "lyra", "three")
	os.Remove(hint)
	mustAppend(t, l, "lyra", "four")
	if err := os.WriteFile(hint, []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e := mustAppend(t, l, "lyra", "five"); e.Seq != 5 {
		t.Fatalf("seq %d", e.Seq)
	}
	if r := mustVerify(t, l); !r.OK(true) || r.Counts[StatusIntact] != 5 {
		t.Fatalf("verify: %v %+v", r.Counts, r.Findings)
	}
}

// TestVerifyChunks verifies with chunks smaller than some entries: the
// report must be the same as with one chunk.
func TestVerifyChunks(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 60 {
		body := strings.Repeat("line of body text\n", i%7*i)
		if _, err := l.Append([]string{"lyra", "ella"}[i%2], Entry{Summary: "entry " + strings.Repeat("x", i), Body: body}); err != nil {
			t.Fatal(err)
		}
		if i%13 == 0 {
			appendRaw(t, segmentPath(l), "hand text "+strings.Repeat("y", i)+"\n\n\n\n")
		}
	}
	data, _ := os.ReadFile(segmentPath(l))
	os.WriteFile(segmentPath(l), []byte(strings.Replace(string(data), "] entry xxxx\n", "] entry xxxX\n", 1)), 0o644)
	want := mustVerify(t, l)
	defer func(old int64) { verifyChunk = old }(verifyChunk)
	for _, chunk := range []int64{97, 500, 4096} {
		verifyChunk = chunk
		got := mustVerify(t, l)
		if fmt.Sprint(got.Counts) != fmt.Sprint(want.Counts) || fmt.Sprint(got.Findings) != fmt.Sprint(want.Findings) {
			t.Fatalf("chunk %d: %v %+v\nwant %v %+v", chunk, got.Counts, got.Findings, want.Counts, want.Findings)
		}
	}
	if want.Counts[StatusEdited] != 1 || want.Counts[StatusUnsigned] != 5 || want.Counts[StatusIntact] != 59 {
		t.Fatalf("counts %v", want.Counts)
	}
}

// TestTornTailNULPadding: a crash that left the feed's end padded with
// NUL bytes (the size set before the data): the next append cuts the
// padding, steps over the record it cut, and leaves the file text again,
// with and without a partial record before the padding.
func TestTornTailNULPadding(t *testing.T) {
	for _, tc := range []struct {
		name    string
		partial string // the cut record before the padding
		torn    bool
	}{
		{"padding alone", "", false},
		{"a cut record, then padding", "### 2026-11-29T15:00:00Z lyra [gen", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, path, es := tamperLog(t)
			appendRaw(t, path, tc.partial+strings.Repeat("\x00", 4096))
			r, err := l.AppendDetailed("lyra", Entry{Summary: "after the crash"})
			if err != nil {
				t.Fatal(err)
			}
			if r.SteppedOverTornTail != tc.torn || r.Entry.Seq != es[len(es)-1].Seq+1 {
				t.Fatalf("stepped over %v, seq %d", r.SteppedOverTornTail, r.Entry.Seq)
			}
			data, _ := os.ReadFile(path)
			if strings.Contains(string(data), "\x00") {
				t.Fatal("the NUL padding stayed")
			}
			rep := mustVerify(t, l)
			if !rep.OK(false) || rep.Counts[StatusUnsigned] != 0 {
				t.Fatalf("verify: %v %+v", rep.Counts, rep.Findings)
			}
			got, _ := l.Read(ReadOptions{Last: 1})
			if len(got) != 1 || got[0].Summary != "after the crash" || got[0].Offset >= int64(len(data)) {
				t.Fatalf("last entry %+v", got)
			}
		})
	}
}
