package livelog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
)

// attackerKey is a signer of agent lyra with a key of its own: what an
// attacker who can write the vault (but not .nexus/keys) signs with.
func attackerKey(t *testing.T) *identity.Signer {
	t.Helper()
	v := mustVault(t) // a vault of its own: lyra there has another key
	s, err := identity.LoadSigner(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// resign re-signs every entry of a feed with s, as writer, after edit has
// changed entry i (1-based) as it likes; the chain is linked again.
func resign(t *testing.T, data []byte, s *identity.Signer, writer string, from int64, edit func(e *Entry)) []byte {
	t.Helper()
	var out []byte
	var prev Hash
	for _, e := range ParseFeed("x", data) {
		if !e.Signed {
			continue
		}
		if e.Seq < from {
			out = append(out, data[e.Offset:e.End]...)
			prev, _ = parseHash(e.Hash)
			continue
		}
		e.Writer, e.feed = writer, true
		if edit != nil {
			edit(&e)
		}
		e.sign(s, prev)
		prev, _ = parseHash(e.Hash)
		out = append(out, e.record()...)
	}
	return out
}

// forgedFeed is a feed of writer, n entries signed by s.
func forgedFeed(s *identity.Signer, writer string, n int) []byte {
	var out []byte
	prev := genesis
	now := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	for i := 1; i <= n; i++ {
		e := Entry{Time: now, timeText: now.Format(timeLayout), Agent: WriterAgent(writer), Channel: "general", Kind: "note",
			Summary: fmt.Sprintf("pay mallory %d", i), stream: streamLive, feed: true, Writer: writer, Seq: int64(i)}
		e.sign(s, prev)
		prev, _ = parseHash(e.Hash)
		out = append(out, e.record()...)
	}
	return out
}

// withDeviceKey adds "device KEY" to IDENTITY.md's device_keys.
func withDeviceKey(id []byte, device string, s *identity.Signer) []byte {
	item := "device_keys:\n    - " + identity.DeviceKey{Device: device, Key: s.PublicKey()}.String() + "\n"
	return bytes.Replace(id, []byte("device_keys:\n"), []byte(item), 1)
}

// replaceKeys puts s's key wherever IDENTITY.md shows the key of m's lyra.
func replaceKeys(t *testing.T, m *machine, id []byte, s *identity.Signer) []byte {
	t.Helper()
	own, err := identity.LoadSigner(m.v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(id, []byte(identity.EncodePublicKey(own.PublicKey())), []byte(identity.EncodePublicKey(s.PublicKey())))
}

// TestTamperSuite: each attack of issue 30 on a log that two machines have
// seen (A appended lyra@vps's entries; B read them, which advanced its
// witness and pinned the key), the tampered files put on both copies: both
// name it, before and after a later append and a later read, and neither
// counts the attacked entries as intact.
func TestTamperSuite(t *testing.T) {
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	feed := FeedPath("lyra@vps", month)
	evil := FeedPath("lyra@evil", month)
	idRel := identity.IdentityPath("lyra")
	cases := []struct {
		name string
		// attack returns the files to write on both copies, from A's.
		attack func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte)
		writer string
		want   Status // the verdict on both copies right after the attack
		// later are the verdicts allowed once A's lyra appended again (A
		// lists its own key in IDENTITY.md again, so a replaced key may
		// read as changed rather than forged); never intact.
		later []Status
		// victimAppends: the later append on A is lyra's own, whose feed
		// was attacked. Not for a copy appending as lyra@vps: an append of
		// lyra on A after it vouches for the copy's entries (detecting the
		// copy before it appends is the device identity's job, SPEC §4 "A
		// device is a machine").
		victimAppends bool
	}{
		{"key substitution and a re-signed feed with entry 3 edited", func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte) {
			files[idRel] = replaceKeys(t, a, files[idRel], k)
			files[feed] = resign(t, files[feed], k, "lyra@vps", 1, func(e *Entry) {
				if e.Seq == 3 {
					e.Summary = "a3, rewritten"
				}
			})
		}, "lyra@vps", StatusForged, []Status{StatusForged, StatusKeyChanged, StatusRemoved}, true},
		{"re-signed head with its key in IDENTITY.md", func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte) {
			files[idRel] = replaceKeys(t, a, files[idRel], k)
			files[feed] = resign(t, files[feed], k, "lyra@vps", 5, func(e *Entry) { e.Summary = "a5, rewritten" })
		}, "lyra@vps", StatusForged, []Status{StatusForged, StatusKeyChanged, StatusRemoved}, true},
		{"forged device lyra@evil with its key in IDENTITY.md", func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte) {
			files[idRel] = withDeviceKey(files[idRel], "evil", k)
			files[evil] = forgedFeed(k, "lyra@evil", 2)
		}, "lyra@evil", StatusNewWriter, []Status{StatusNewWriter}, true},
		{"keyless forged feed lyra@evil", func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte) {
			files[evil] = forgedFeed(k, "lyra@evil", 2)
		}, "lyra@evil", StatusForged, []Status{StatusForged}, true},
		{"rollback after read: an older copy of the feed restored", func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte) {
			es := ParseFeed("x", files[feed])
			files[feed] = files[feed][:es[3].Offset] // entries 1-3
		}, "lyra@vps", StatusRemoved, []Status{StatusRemoved}, true},
		{"same number, other bytes: a copy appended as lyra@vps", func(t *testing.T, a *machine, k *identity.Signer, files map[string][]byte) {
			// The copy held the key too (cp -a): entries 4-5 replaced by
			// its own 4-6, signed with the pinned key itself.
			own, err := identity.LoadSigner(a.v, "lyra")
			if err != nil {
				t.Fatal(err)
			}
			es := ParseFeed("x", files[feed])
			copyOf := append([]byte{}, files[feed][:es[3].Offset]...)
			prev, _ := parseHash(es[2].Hash)
			for i := int64(4); i <= 6; i++ {
				now := time.Date(2026, 11, 29, 17, 0, int(i), 0, time.UTC)
				e := Entry{Time: now, timeText: now.Format(timeLayout), Agent: "lyra", Channel: "general", Kind: "note",
					Summary: fmt.Sprintf("copy %d", i), stream: streamLive, feed: true, Writer: "lyra@vps", Seq: i}
				e.sign(own, prev)
				prev, _ = parseHash(e.Hash)
				copyOf = append(copyOf, e.record()...)
			}
			files[feed] = copyOf
		}, "lyra@vps", StatusRemoved, []Status{StatusRemoved}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, b := twoMachines(t, "laptop")
			for i := 1; i <= 5; i++ {
				a.append(t, "lyra", fmt.Sprintf("a%d", i))
			}
			a.syncTo(t, b)
			// B reads: its witness advances and lyra@vps is pinned there.
			if got, err := b.l.Read(ReadOptions{}); err != nil || len(got) != 5 {
				t.Fatalf("read on B: %d entries, %v", len(got), err)
			}
			if s := b.l.loadWitness().get(streamLive, "lyra@vps"); s.Seq != 5 {
				t.Fatalf("B's witness after a read: %+v, want seq 5", s)
			}
			if p, _ := b.l.loadPins(); len(p.Writers["lyra@vps"].Keys) != 1 {
				t.Fatalf("B's pins after a read: %+v", p)
			}
			for _, m := range []*machine{a, b} {
				if r := mustVerify(t, m.l); !r.OK(true) {
					t.Fatalf("before the attack on %s: %v %+v", m.v.Root(), r.Counts, r.Findings)
				}
			}
			files := map[string][]byte{}
			for _, rel := range []string{feed, idRel} {
				data, err := os.ReadFile(a.v.MustPath(rel))
				if err != nil {
					t.Fatal(err)
				}
				files[rel] = data
			}
			c.attack(t, a, attackerKey(t), files)
			for _, m := range []*machine{a, b} {
				for rel, data := range files {
					os.MkdirAll(filepath.Dir(m.v.MustPath(rel)), 0o755)
					if err := os.WriteFile(m.v.MustPath(rel), data, 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			named := func(when string, allowed []Status) {
				t.Helper()
				for _, m := range []*machine{a, b} {
					r := mustVerify(t, m.l)
					found := false
					for _, f := range r.Findings {
						found = found || (f.Writer == c.writer && slices.Contains(allowed, f.Status))
					}
					if !found || r.OK(false) {
						t.Fatalf("%s, on %s: want one of %q named for %s: %v %+v", when, filepath.Base(filepath.Dir(m.v.Root())), allowed, c.writer, r.Counts, r.Findings)
					}
				}
			}
			named("right after", []Status{c.want})
			// A later append on each side, synced both ways.
			later := "mallory"
			if c.victimAppends {
				later = "lyra"
			}
			if _, err := a.l.Append(later, Entry{Summary: "a later one"}); err != nil {
				t.Fatal(err)
			}
			b.append(t, "ella", "b later")
			a.syncTo(t, b)
			b.syncTo(t, a)
			if _, err := a.l.Trust("ella@laptop"); err != nil { // A holds a key of ella
				t.Fatal(err)
			}
			named("after a later append", c.later)
			// A later read on each side.
			for _, m := range []*machine{a, b} {
				if _, err := m.l.ReadUnread("mallory", true); err != nil {
					t.Fatal(err)
				}
				if _, err := m.l.Read(ReadOptions{Last: 3}); err != nil {
					t.Fatal(err)
				}
			}
			named("after a later read", c.later)
		})
	}
}

// TestRsyncDelete: 'rsync -a --delete A/ B/' replaces B's copy with A's,
// where B's newest entries of its own feed are not yet: B appended them,
// so B names them removed, also after it appends and reads again.
func TestRsyncDelete(t *testing.T) {
	a, b := twoMachines(t, "laptop")
	b.append(t, "ella", "b1")
	b.append(t, "ella", "b2")
	b.syncTo(t, a)
	if _, err := a.l.Trust("ella@laptop"); err != nil { // A holds a key of ella
		t.Fatal(err)
	}
	if _, err := a.l.Read(ReadOptions{}); err != nil { // A saw b1-b2
		t.Fatal(err)
	}
	b.append(t, "ella", "b3")
	b.append(t, "ella", "b4")
	// rsync -a --delete A/ B/ of what travels: B's feed becomes A's.
	rel := FeedPath("ella@laptop", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	data, err := os.ReadFile(a.v.MustPath(rel))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.v.MustPath(rel), data, 0o644); err != nil {
		t.Fatal(err)
	}
	lost := func(when string) {
		t.Helper()
		r := mustVerify(t, b.l)
		if r.OK(false) || !hasFinding(r, StatusRemoved, "ella@laptop") {
			t.Fatalf("%s: want entries 3-4 of ella@laptop named removed on B: %v %+v", when, r.Counts, r.Findings)
		}
		if ra := mustVerify(t, a.l); !ra.OK(false) {
			t.Fatalf("%s: A never saw b3-b4, and has lost nothing: %v %+v", when, ra.Counts, ra.Findings)
		}
	}
	lost("right after")
	b.append(t, "ella", "b5")
	lost("after a later append")
	if _, err := b.l.ReadUnread("mallory", true); err != nil {
		t.Fatal(err)
	}
	lost("after a later read")
	if got := strings.Join(summaries(mustRead(t, b.l)), " "); !strings.Contains(got, "b5") {
		t.Fatalf("B's log: %s", got)
	}
}

func mustRead(t *testing.T, l *Log) []Entry {
	t.Helper()
	es, err := l.Read(ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}
