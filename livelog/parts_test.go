package livelog

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// TestFixtures parses the on-disk fixtures and checks each block's shape.
func TestFixtures(t *testing.T) {
	type want struct {
		summary            string
		signed, hand, torn bool
		body               string
	}
	cases := []struct {
		file string
		want []want
	}{
		{"torn-tail.md", []want{
			{summary: "First entry", signed: true, body: "Body line."},
			{summary: "Second entry, cut short by a cra", torn: true},
		}},
		{"stepped-over.md", []want{
			{summary: "First entry", signed: true},
			{summary: "Second entry", torn: true, body: "Its body was cut"},
			{summary: "Third entry", signed: true},
		}},
		{"hand-typed.md", []want{
			{summary: "A person's paragraph at the top,", hand: true, body: "A person's paragraph at the top,\nover two lines."},
			{summary: "Signed entry", signed: true, body: "### 2026-11-29T15:00:00Z mallory [deploy/shipped] escaped header in a body\n<!-- nexus prev=x sig=y -->"},
			{summary: "Typed by hand in the entry format", body: "No signature line.\n\nAnother paragraph, no header."},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p := newParser(data, 0, 1, streamLive, c.file)
			var got []Entry
			for {
				e, ok := p.next()
				if !ok {
					break
				}
				got = append(got, e)
			}
			if len(got) != len(c.want) {
				t.Fatalf("%d blocks, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				g := got[i]
				if g.Summary != w.summary || g.Signed != w.signed || g.Hand != w.hand || g.Torn != w.torn || (w.body != "" && g.Body != w.body) {
					t.Errorf("block %d = %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func TestDecisions(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	d1, err := l.Record("lyra", Decision{Title: "Secrets in\nfiles", Decision: "Keep tokens in .env\n**Rationale:** not a label", Rationale: "simple"})
	if err != nil {
		t.Fatal(err)
	}
	if d1.ID != "lyra@box:D-0001" || d1.Title != "Secrets in files" || d1.File != "log/decisions/lyra@box.md" {
		t.Fatalf("first decision %+v", d1)
	}
	if _, err := l.Record("ella", Decision{Title: "x", Decision: "y", Supersedes: "lyra@box:D-0009"}); !errors.Is(err, ErrNoDecision) {
		t.Fatalf("supersedes unknown: %v", err)
	}
	for _, bad := range []Decision{{Title: "", Decision: "y"}, {Title: "t", Decision: ""}, {Title: "t", Decision: "y", Supersedes: "nope"}, {Title: "t", Decision: "y\xff"}} {
		if _, err := l.Record("ella", bad); !errors.Is(err, vault.ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	d2, err := l.Record("ella", Decision{Title: "비밀은 키체인에", Decision: "Use the OS keychain", Rationale: "vault syncs to phones", Supersedes: "lyra@box:d-0001"})
	if err != nil {
		t.Fatal(err)
	}
	if d2.ID != "ella@box:D-0001" || d2.Supersedes != "lyra@box:D-0001" {
		t.Fatalf("second %+v", d2)
	}
	// D-0001 is already replaced: a second replacement would leave two
	// decisions current, so it is refused and names the one that holds.
	if _, err := l.Record("lyra", Decision{Title: "again", Decision: "z", Supersedes: "lyra@box:D-0001"}); !errors.Is(err, vault.ErrRefused) || !strings.Contains(err.Error(), "ella@box:D-0001") {
		t.Fatalf("superseding a superseded decision: %v", err)
	}
	cur, err := l.ListDecisions(false)
	if err != nil || len(cur) != 1 || cur[0].ID != "ella@box:D-0001" || cur[0].Title != "비밀은 키체인에" || cur[0].Rationale != "vault syncs to phones" {
		t.Fatalf("current %+v %v", cur, err)
	}
	all, _ := l.ListDecisions(true)
	if len(all) != 2 || all[0].SupersededBy != "ella@box:D-0001" || all[0].Decision != "Keep tokens in .env\n**Rationale:** not a label" || all[0].Rationale != "simple" {
		t.Fatalf("all %+v", all)
	}
	// A person appends a paragraph: listing and verification still work,
	// and the next id continues.
	appendRaw(t, v.MustPath(DecisionFeedPath("lyra@box")), "Discussed in the weekly call.\n")
	d3, err := l.Record("lyra", Decision{Title: "t3", Decision: "d3"})
	if err != nil || d3.ID != "lyra@box:D-0002" {
		t.Fatalf("third %+v %v", d3, err)
	}
	r := mustVerify(t, l)
	if !r.OK(false) || r.Counts[StatusIntact] != 3 || r.Counts[StatusUnsigned] != 1 {
		t.Fatalf("verify %v %+v", r.Counts, r.Findings)
	}
	// Decisions are signed for the decision log: moved into the live log,
	// they do not verify.
	data, _ := os.ReadFile(v.MustPath(DecisionFeedPath("lyra@box")))
	mustAppend(t, l, "lyra", "live entry")
	appendRaw(t, segmentPath(l), string(data[:strings.Index(string(data), " -->\n\n")+6]))
	if r := mustVerify(t, l); r.Counts[StatusEdited] != 1 || r.OK(false) {
		t.Fatalf("cross-log copy: %v %+v", r.Counts, r.Findings)
	}
}

func TestCheckpoints(t *testing.T) {
	v := mustVault(t)
	if _, err := LoadCheckpoint(v, "lyra"); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("load before save: %v", err)
	}
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	c1 := Checkpoint{Task: "migrate db", State: "step 3/5", Next: "step 4", Files: []string{"a.go", " ", "b.sql"}, Notes: "multi\nline: notes\n---\n"}
	if _, err := SaveCheckpoint(v, "lyra", c1, t0); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	if got.Task != "migrate db" || got.State != "step 3/5" || len(got.Files) != 2 || got.Notes != "multi\nline: notes\n---" || !got.Time.Equal(t0) || got.Agent != "lyra" {
		t.Fatalf("loaded %+v", got)
	}
	first, _ := os.ReadFile(v.MustPath(CurrentCheckpointPath("lyra")))
	// Same second twice: history names do not collide.
	for i, state := range []string{"step 4/5", "step 5/5"} {
		if _, err := SaveCheckpoint(v, "lyra", Checkpoint{Task: "migrate db", State: state}, t0.Add(time.Duration(i)*0)); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := CheckpointHistory(v, "lyra")
	if err != nil || len(hist) != 2 {
		t.Fatalf("history %+v %v", hist, err)
	}
	kept, _ := os.ReadFile(v.MustPath(CheckpointHistoryDir("lyra") + "/2026-11-29T15-00-00Z.md"))
	if string(kept) != string(first) {
		t.Fatalf("history is not the old file byte for byte:\n%s", kept)
	}
	cur, _ := LoadCheckpoint(v, "lyra")
	if cur.State != "step 5/5" {
		t.Fatalf("current %+v", cur)
	}
	for _, bad := range []Checkpoint{{Task: ""}, {Task: "t\xff"}, {Task: "t", Files: []string{"a\nb"}}, {Task: strings.Repeat("x", MaxCheckpointField+1)}} {
		if _, err := SaveCheckpoint(v, "lyra", bad, t0); !errors.Is(err, vault.ErrInvalid) {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if _, err := SaveCheckpoint(v, "nobody", c1, t0); !errors.Is(err, vault.ErrNotFound) {
		t.Fatalf("unknown agent: %v", err)
	}
	// The file is readable markdown with frontmatter.
	data, _ := os.ReadFile(v.MustPath(CurrentCheckpointPath("lyra")))
	if !strings.HasPrefix(string(data), "---\nagent: lyra\n") || !strings.Contains(string(data), "# Checkpoint: migrate db") {
		t.Fatalf("file:\n%s", data)
	}
}

// fixedKey gives agent a key from a fixed seed, so signatures (and so the
// whole file) are reproducible.
func fixedKey(t *testing.T, v *vault.Vault, agent string, seedByte byte) {
	t.Helper()
	seed := bytes.Repeat([]byte{seedByte}, ed25519.SeedSize)
	priv := ed25519.NewKeyFromSeed(seed)
	if err := os.WriteFile(v.MustPath(identity.KeyPath(agent)), []byte("ed25519-private:"+base64.StdEncoding.EncodeToString(seed)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := v.MustPath(identity.IdentityPath(agent))
	data, _ := os.ReadFile(p)
	out, err := vault.SetProperty(data, "public_key", identity.EncodePublicKey(priv.Public().(ed25519.PublicKey)))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, out, 0o644)
}

// TestSegmentGolden pins the on-disk format: entries, escaping, a torn
// tail stepped over, decisions.
func TestSegmentGolden(t *testing.T) {
	v := mustVault(t)
	fixedKey(t, v, "lyra", 1)
	fixedKey(t, v, "ella", 2)
	l := mustLog(t, v)
	if _, err := l.Append("lyra", Entry{Channel: "deploy", Kind: "shipped", Summary: "Fixed login timeout; PR #123 merged", Body: "Root cause: the session cache TTL.\n\n### 2026-11-29T15:00:00Z mallory [deploy/shipped] not an entry\n<!-- nexus prev=x sig=y -->"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("ella", Entry{Channel: "배포", Kind: "질문", Summary: "롤백 계획은?\n두 줄"}); err != nil {
		t.Fatal(err)
	}
	appendRaw(t, segmentPath(l), "A person's note.\n\n### 2026-11-29T15:00:09Z lyra [deploy/note] cut sh")
	if _, err := l.Append("lyra", Entry{Summary: "after the crash", Body: "```\nunclosed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Record("ella", Decision{Title: "Secrets in the keychain", Decision: "Use the OS keychain.\n**Rationale:** inside the text", Rationale: "Vault syncs to phones."}); err != nil {
		t.Fatal(err)
	}
	seg, _ := os.ReadFile(segmentPath(l))
	ella, _ := os.ReadFile(feedFile(l, "ella"))
	dec, _ := os.ReadFile(v.MustPath(DecisionFeedPath("ella@box")))
	got := "==> " + FeedPath("lyra@box", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) + "\n" + string(seg) +
		"==> " + FeedPath("ella@box", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)) + "\n" + string(ella) +
		"==> " + DecisionFeedPath("ella@box") + "\n" + string(dec)
	golden := filepath.Join("testdata", "segment.golden")
	if *update {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Fatalf("on-disk format differs from %s (run with -update if intended):\n%s", golden, got)
	}
	r := mustVerify(t, l)
	if r.Counts[StatusIntact] != 4 || r.Counts[StatusUnsigned] != 1 || r.Counts[StatusTruncated] != 1 {
		t.Fatalf("verify %v %+v", r.Counts, r.Findings)
	}
}

// TestDecisionsTampering: the decision chain is verified like the live log,
// including decisions cut off its end.
func TestDecisionsTampering(t *testing.T) {
	for _, c := range []struct {
		name   string
		tamper func(data []byte, ds []Decision) []byte
		want   Status
	}{
		{"text edited", func(data []byte, ds []Decision) []byte {
			return bytes.Replace(data, []byte("decision two"), []byte("decision 2"), 1)
		}, StatusEdited},
		{"last decision cut off", func(data []byte, ds []Decision) []byte {
			return data[:bytes.LastIndex(data, []byte("### "))]
		}, StatusRemoved},
		{"middle decision deleted", func(data []byte, ds []Decision) []byte {
			i := bytes.Index(data, []byte("[decision/D-0002]"))
			j := bytes.Index(data, []byte("[decision/D-0003]"))
			start := bytes.LastIndex(data[:i], []byte("### "))
			end := bytes.LastIndex(data[:j], []byte("### "))
			return append(append([]byte{}, data[:start]...), data[end:]...)
		}, StatusRemoved},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := mustVault(t)
			l := mustLog(t, v)
			for _, n := range []string{"one", "two", "three"} {
				if _, err := l.Record("lyra", Decision{Title: "D " + n, Decision: "decision " + n}); err != nil {
					t.Fatal(err)
				}
			}
			if r := mustVerify(t, l); !r.OK(true) || r.Counts[StatusIntact] != 3 {
				t.Fatalf("before: %v", r.Counts)
			}
			p := v.MustPath(DecisionFeedPath("lyra@box"))
			data, _ := os.ReadFile(p)
			ds, _ := l.ListDecisions(true)
			os.WriteFile(p, c.tamper(data, ds), 0o644)
			r := mustVerify(t, l)
			if r.Counts[c.want] == 0 || r.OK(false) {
				t.Fatalf("want %s: %v %+v", c.want, r.Counts, r.Findings)
			}
		})
	}
}

// TestUnreadEnd: n entries from either end of what is unread, oldest
// first, and the total; nothing acknowledged.
func TestUnreadEnd(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 7 {
		mustAppend(t, l, []string{"lyra", "mallory"}[i%2], fmt.Sprintf("e%d", i))
	}
	cases := []struct {
		n      int
		oldest bool
		want   string
	}{
		{3, true, "e0 e1 e2"},
		{3, false, "e4 e5 e6"},
		{10, false, "e0 e1 e2 e3 e4 e5 e6"},
		{10, true, "e0 e1 e2 e3 e4 e5 e6"},
		{0, false, ""},
		{0, true, ""},
	}
	for _, c := range cases {
		es, total, err := l.UnreadEnd("ella", c.n, c.oldest)
		if err != nil || total != 7 || strings.Join(summaries(es), " ") != c.want {
			t.Errorf("UnreadEnd(%d, %v) = %v, %d, %v; want %q of 7", c.n, c.oldest, summaries(es), total, err, c.want)
		}
	}
	if n, _, _ := l.UnreadCount("ella"); n != 7 {
		t.Fatalf("UnreadEnd acknowledged: %d unread", n)
	}
}
