package doctor

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/curator"
	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// TestDoctorNamesDecisionsWithoutAPersonsSignature: with
// review.require_person_key on, doctor names every decided item without a
// valid signature (unsigned, forged, by a key this machine does not
// trust), approvals set in Obsidian that wait for 'nexus review sign', and
// public keys this machine does not trust; a signed approval is not named.
func TestDoctorNamesDecisionsWithoutAPersonsSignature(t *testing.T) {
	v := mustVault(t)
	alice, err := person.Create(v, "alice", []byte("correct horse battery"), t0)
	must(t, err)
	other := mustVault(t)
	mallory, err := person.Create(other, "mallory", []byte("correct horse battery"), t0)
	must(t, err)
	now := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	retain := func(name string) retention.Item {
		it, err := retention.Retain(v, "ella", agents.FactInput{Name: name, Description: "about " + name, Type: "user", Body: "The body of " + name + "."}, retention.Provenance{}, now)
		must(t, err)
		return it
	}
	// Decided before the setting was switched on: no signature needed then.
	signed, unsigned, byMallory, forged := retain("signed"), retain("unsigned"), retain("by mallory"), retain("forged")
	_, err = retention.Approve(v, signed.ID, retention.Decision{By: "alice", Now: now, Signer: alice})
	must(t, err)
	_, err = retention.Approve(v, unsigned.ID, retention.Decision{By: "someone", Now: now})
	must(t, err)
	_, err = retention.Approve(v, forged.ID, retention.Decision{By: "alice", Now: now, Signer: alice})
	must(t, err)
	// A writer of the vault changes the approved text after signing, and
	// signs byMallory's approval with a key of its own.
	p := v.MustPath(retention.ArchivePath(forged.ID))
	data, err := os.ReadFile(p)
	must(t, err)
	must(t, os.WriteFile(p, []byte(strings.Replace(string(data), "The body of forged.", "Something else.", 1)), 0o644))
	_, err = retention.Approve(v, byMallory.ID, retention.Decision{By: "mallory", Now: now})
	must(t, err)
	s, err := mallory.Sign(mustGet(t, v, byMallory.ID).Statement(true, now))
	must(t, err)
	p = v.MustPath(retention.ArchivePath(byMallory.ID))
	data, err = os.ReadFile(p)
	must(t, err)
	data, err = vault.SetProperty(data, "signed_by", "mallory")
	must(t, err)
	data, err = vault.SetProperty(data, "signature", s.Encode())
	must(t, err)
	must(t, os.WriteFile(p, data, 0o644))
	// mallory's public key reaches the vault.
	pub, err := os.ReadFile(other.MustPath(person.PeopleDir + "/mallory.pub"))
	must(t, err)
	must(t, os.WriteFile(v.MustPath(person.PeopleDir+"/mallory.pub"), pub, 0o644))
	// Approved in Obsidian.
	obs := retain("in obsidian")
	p = v.MustPath(obs.Path)
	data, err = os.ReadFile(p)
	must(t, err)
	data, err = vault.SetProperty(data, "status", "approved")
	must(t, err)
	must(t, os.WriteFile(p, data, 0o644))

	for _, on := range []bool{false, true} {
		must(t, v.UpdateConfig(func(c *vault.Config) error { c.Review.RequirePersonKey = on; return nil }))
		fs := findingsOf(mustRun(t, v.Root()), "review")
		text := ""
		for _, f := range fs {
			text += f.Path + ": " + f.Problem + " | " + f.Fix + "\n"
		}
		named := func(s string) bool { return strings.Contains(text, s) }
		if !on {
			if named("signature") || named("not trusted") {
				t.Fatalf("setting off, doctor names signatures:\n%s", text)
			}
			continue
		}
		for _, want := range []string{
			retention.ArchivePath(unsigned.ID) + ": approved " + unsigned.ID,
			retention.ArchivePath(forged.ID) + ": approved " + forged.ID,
			retention.ArchivePath(byMallory.ID) + ": approved " + byMallory.ID,
			obs.Path + ": marked approved in Obsidian; it waits for a person's signature",
			"review sign " + obs.ID,
			person.PeopleDir + "/mallory.pub: review key mallory",
		} {
			if !named(want) {
				t.Errorf("doctor does not name %q:\n%s", want, text)
			}
		}
		if named(signed.ID) {
			t.Errorf("doctor names the signed approval %s:\n%s", signed.ID, text)
		}
		if named("NEXUS_AGENT") {
			t.Errorf("doctor tells how to get past a refusal:\n%s", text)
		}
	}
}

func mustGet(tb testing.TB, v *vault.Vault, id string) retention.Item {
	tb.Helper()
	it, err := retention.Get(v, id)
	if err != nil {
		tb.Fatal(err)
	}
	return it
}

// TestDoctorNamesAnInterruptedCuratorPass: a pass's snapshot without its
// diary is named; with the diary it is not.
func TestDoctorNamesAnInterruptedCuratorPass(t *testing.T) {
	v := mustVault(t)
	if curatorPassReason != curator.PassSnapshotReason {
		t.Fatalf("doctor's %q is not the curator's %q", curatorPassReason, curator.PassSnapshotReason)
	}
	id := "c-20260115T020000Z"
	if _, err := retention.TakeSnapshot(v, curator.PassSnapshotReason+id, []string{"agents/lyra/MEMORY.md"}, t0); err != nil {
		t.Fatal(err)
	}
	named := func() bool {
		for _, f := range findingsOf(mustRun(t, v.Root()), "review") {
			if strings.Contains(f.Problem, "curator pass "+id+" ") && strings.Contains(f.Fix, "curator run") {
				return true
			}
		}
		return false
	}
	if !named() {
		t.Fatal("doctor does not name the interrupted pass")
	}
	if _, err := curator.FinishInterrupted(v); err != nil {
		t.Fatal(err)
	}
	if named() {
		t.Fatal("doctor still names the pass once its diary is written")
	}
}
