package livelog

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
)

// TestRotationAcceptedWherePinned: B pinned lyra@vps's key; A rotates it
// (the new key signed by the old one) and appends with the new key. B
// accepts the new key without a person and pins it too; a "rotation"
// written by someone without the pinned key is not accepted.
func TestRotationAcceptedWherePinned(t *testing.T) {
	a, b := twoMachines(t, "laptop")
	a.append(t, "lyra", "a1")
	a.append(t, "lyra", "a2")
	a.syncTo(t, b)
	if r := mustVerify(t, b.l); !r.OK(true) {
		t.Fatalf("B before: %v %+v", r.Counts, r.Findings)
	}
	old, nw, err := identity.RotateKey(a.v, "lyra", "vps", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.l.Rotated("lyra@vps", old, nw); err != nil {
		t.Fatal(err)
	}
	// A process started after the rotation signs with the new key (one
	// running keeps the old one, still listed and pinned).
	if a.l, err = Open(a.v, Options{Now: a.l.opts.Now}); err != nil {
		t.Fatal(err)
	}
	a.append(t, "lyra", "a3, new key")
	a4 := a.append(t, "lyra", "a4, new key")
	if sig, _ := b64.DecodeString(a4.Sig); !identity.VerifySignature(nw, a4.Canonical(), sig) {
		t.Fatal("a4 is not signed with the new key")
	}
	a.syncTo(t, b)
	for _, m := range []*machine{a, b} {
		if r := mustVerify(t, m.l); !r.OK(true) || r.Counts[StatusIntact] != 4 {
			t.Fatalf("after the rotation on %s: %v %+v", m.v.Root(), r.Counts, r.Findings)
		}
	}
	p, err := b.l.loadPins()
	if err != nil || len(p.Writers["lyra@vps"].Keys) != 2 {
		t.Fatalf("B's pins after the rotation: %+v %v", p.Writers["lyra@vps"], err)
	}

	// A rotation whose old key nobody pinned: an attacker's own pair.
	k := attackerKey(t)
	k2 := attackerKey(t)
	idPath := a.v.MustPath(identity.IdentityPath("lyra"))
	id, _ := os.ReadFile(idPath)
	id = withDeviceKey(id, "vps", k2)
	rot := identity.Rotation{Device: "vps", Old: k.PublicKey(), New: k2.PublicKey()}
	rot.Sig = k.Sign([]byte("nexus key rotation v1\nagent: lyra\ndevice: vps\nold: " + identity.EncodePublicKey(k.PublicKey()) + "\nnew: " + identity.EncodePublicKey(k2.PublicKey()) + "\n"))
	if !rot.Valid("lyra") {
		t.Fatal("test setup: the rotation's signature should be valid")
	}
	id = bytes.Replace(id, []byte("key_rotations:\n"), []byte("key_rotations:\n    - "+rot.String()+"\n"), 1)
	if err := os.WriteFile(idPath, id, 0o644); err != nil {
		t.Fatal(err)
	}
	rel := FeedPath("lyra@vps", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	data, _ := os.ReadFile(a.v.MustPath(rel))
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	es := ParseFeed(rel, data)
	last := es[len(es)-1]
	prev, _ := parseHash(last.Hash)
	e := Entry{Time: now, timeText: now.Format(timeLayout), Agent: "lyra", Channel: "general", Kind: "note", Summary: "pay mallory",
		stream: streamLive, feed: true, Writer: "lyra@vps", Seq: last.Seq + 1}
	e.sign(k2, prev)
	if err := os.WriteFile(a.v.MustPath(rel), append(data, e.record()...), 0o644); err != nil {
		t.Fatal(err)
	}
	a.syncTo(t, b)
	for _, m := range []*machine{a, b} {
		r := mustVerify(t, m.l)
		if r.OK(false) || r.Counts[StatusKeyChanged] != 1 {
			t.Fatalf("an unvouched rotation on %s: %v %+v", m.v.Root(), r.Counts, r.Findings)
		}
	}
}

// TestPinsConcurrent: processes pinning writers at once lose none of them
// (each Log stands for a process; the lock is a file lock).
func TestPinsConcurrent(t *testing.T) {
	v := mustVault(t)
	s, err := identity.LoadSigner(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := Open(v, Options{})
			if err != nil {
				errs <- err
				return
			}
			writer := fmt.Sprintf("lyra@d%d", i)
			errs <- l.updatePins(func(p *pinSet) bool {
				return p.pin(writer, []ed25519.PublicKey{s.PublicKey()}, pinFirstUse, time.Now())
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l, _ := Open(v, Options{})
	p, err := l.loadPins()
	if err != nil || len(p.Writers) != n {
		t.Fatalf("%d pins of %d: %v", len(p.Writers), n, err)
	}
}
