package curator

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// filePromotion files one curator proposal: promote a fact read often.
func filePromotion(t *testing.T, v *vault.Vault) retention.Item {
	t.Helper()
	filePromotionSignals(t, v)
	if _, err := Run(v, PassOptions{Now: t0.Add(4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	proms := pendingOf(t, v, retention.KindPromote)
	if len(proms) != 1 {
		t.Fatalf("promotions %+v", proms)
	}
	return proms[0]
}

// filePromotionSignals writes a fact and the recall signals that make the
// next pass propose promoting it.
func filePromotionSignals(t *testing.T, v *vault.Vault) {
	t.Helper()
	if _, err := agents.WriteFact(v, "lyra", agents.FactInput{Name: "Staging SSH", Description: "port 2222", Type: agents.FactProject, Body: "Staging listens on 2222."}, t0); err != nil {
		t.Fatal(err)
	}
	rec := agents.Recall(v)
	p := agents.FactPath("lyra", "staging-ssh")
	for i, q := range []string{"staging port", "ssh staging", "which port"} {
		at := t0.Add(time.Duration(i+1) * time.Hour)
		rec.Record(agents.RecallEvent{Time: at, Agent: "lyra", Kind: agents.RecallHits, Query: q, Hits: []string{p}})
		rec.Record(agents.RecallEvent{Time: at.Add(time.Second), Agent: "lyra", Kind: agents.RecallRead, Path: p})
	}
	if err := rec.Flush(); err != nil { // another process runs the pass
		t.Fatal(err)
	}
}

// TestCuratorDecisionsNeedAPersonsSignature: deciding a curator proposal
// is a review decision like any other (SPEC §7): with
// review.require_person_key it needs a valid signature by a key this
// machine trusts, and without one nothing is applied.
func TestCuratorDecisionsNeedAPersonsSignature(t *testing.T) {
	keyDir := t.TempDir()
	kv, _, err := vault.Init(filepath.Join(keyDir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	mv, _, err := vault.Init(filepath.Join(keyDir, "m"))
	if err != nil {
		t.Fatal(err)
	}
	alice, err := person.Create(kv, "alice", []byte("correct horse battery"), t0)
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := person.Create(mv, "mallory", []byte("correct horse battery"), t0)
	if err != nil {
		t.Fatal(err)
	}
	pin, err := os.ReadFile(kv.MustPath(person.PinsDir + "/alice"))
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(5 * time.Hour)
	for _, approve := range []bool{true, false} {
		for _, on := range []bool{false, true} {
			for _, sc := range []string{"unsigned", "signed", "forged", "other key"} {
				name := map[bool]string{true: "approve", false: "reject"}[approve] + "/" + map[bool]string{true: "on", false: "off"}[on] + "/" + sc
				t.Run(name, func(t *testing.T) {
					v := mustVault(t)
					if err := os.MkdirAll(v.MustPath(person.PinsDir), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(v.MustPath(person.PinsDir+"/alice"), pin, 0o644); err != nil {
						t.Fatal(err)
					}
					if err := v.UpdateConfig(func(c *vault.Config) error { c.Review.RequirePersonKey = on; return nil }); err != nil {
						t.Fatal(err)
					}
					it := filePromotion(t, v)
					d := retention.Decision{By: "alice", Why: "checked", Now: now}
					switch sc {
					case "signed":
						d.Signer = alice
					case "forged":
						s, _ := alice.Sign(it.Statement(approve, now))
						s.Sig[3] ^= 8
						d.Signature = &s
					case "other key":
						d.Signer = mallory
					}
					decide := retention.Reject
					if approve {
						decide = retention.Approve
					}
					_, err := decide(v, it.ID, d)
					wantOK := sc == "signed" || (!on && sc == "unsigned")
					if (err == nil) != wantOK {
						t.Fatalf("err = %v, want ok=%v", err, wantOK)
					}
					m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
					entries, _ := m.Entries()
					if promoted := len(entries) == 1; promoted != (wantOK && approve) {
						t.Fatalf("memory %q after %s (err %v)", entries, name, err)
					}
					if !wantOK {
						if !errors.Is(err, retention.ErrUnsigned) {
							t.Fatalf("refusal %v does not wrap ErrUnsigned", err)
						}
						if got, gerr := retention.Get(v, it.ID); gerr != nil || got.Path != it.Path {
							t.Fatalf("refused proposal moved: %+v %v", got, gerr)
						}
						return
					}
					got, err := retention.Get(v, it.ID)
					if err != nil {
						t.Fatal(err)
					}
					if verr := retention.VerifyDecision(v, got); (verr == nil) != (sc == "signed") {
						t.Fatalf("archived proposal: verify %v", verr)
					}
				})
			}
		}
	}
}
