package retention

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/vault"
)

// testKeys are alice's key (trusted in every test vault that calls
// trustAlice) and mallory's (never trusted), made once: sealing a key
// costs 600,000 PBKDF2 rounds.
var testKeys struct {
	once           sync.Once
	alice, mallory *person.Key
	alicePin       []byte
	err            error
}

func keys(tb testing.TB) (alice, mallory *person.Key) {
	tb.Helper()
	testKeys.once.Do(func() {
		dir, err := os.MkdirTemp("", "nexus-person-keys-")
		if err != nil {
			testKeys.err = err
			return
		}
		defer os.RemoveAll(dir)
		a, _, err := vault.Init(filepath.Join(dir, "a"))
		if err != nil {
			testKeys.err = err
			return
		}
		m, _, err := vault.Init(filepath.Join(dir, "m"))
		if err != nil {
			testKeys.err = err
			return
		}
		if testKeys.alice, testKeys.err = person.Create(a, "alice", []byte("correct horse battery"), t0); testKeys.err != nil {
			return
		}
		if testKeys.mallory, testKeys.err = person.Create(m, "mallory", []byte("correct horse battery"), t0); testKeys.err != nil {
			return
		}
		testKeys.alicePin, testKeys.err = os.ReadFile(a.MustPath(person.PinsDir + "/alice"))
	})
	if testKeys.err != nil {
		tb.Fatal(testKeys.err)
	}
	return testKeys.alice, testKeys.mallory
}

// trustAlice pins alice's key in v, as 'nexus person init' on this machine
// would have.
func trustAlice(tb testing.TB, v *vault.Vault) {
	tb.Helper()
	keys(tb)
	if err := os.MkdirAll(v.MustPath(person.PinsDir), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(v.MustPath(person.PinsDir+"/alice"), testKeys.alicePin, 0o644); err != nil {
		tb.Fatal(err)
	}
}

func requirePersonKey(tb testing.TB, v *vault.Vault, on bool) {
	tb.Helper()
	if err := v.UpdateConfig(func(c *vault.Config) error { c.Review.RequirePersonKey = on; return nil }); err != nil {
		tb.Fatal(err)
	}
}

// TestDecisionsNeedAPersonsSignature is the table of SPEC §7's "only a
// person approves": approve, reject and rollback, with the setting on and
// off, unsigned, signed, forged, signed by a key this machine does not
// trust, and signed over other content.
func TestDecisionsNeedAPersonsSignature(t *testing.T) {
	alice, mallory := keys(t)
	type sigCase string
	const (
		unsigned sigCase = "unsigned"
		signed   sigCase = "signed"
		forged   sigCase = "forged"
		otherKey sigCase = "other key"
		stale    sigCase = "signed other content"
	)
	now := t0.Add(time.Hour)
	for _, op := range []string{person.Approve, person.Reject, person.Rollback} {
		for _, on := range []bool{false, true} {
			for _, sc := range []sigCase{unsigned, signed, forged, otherKey, stale} {
				name := op + "/" + map[bool]string{true: "on", false: "off"}[on] + "/" + string(sc)
				t.Run(name, func(t *testing.T) {
					v := mustVault(t)
					trustAlice(t, v)
					requirePersonKey(t, v, on)
					it := mustRetain(t, v, "lyra", fact("tea"), t0)
					var st person.Statement
					var snapID string
					if op == person.Rollback {
						snap, err := TakeSnapshot(v, "test", []string{it.Target}, t0)
						if err != nil {
							t.Fatal(err)
						}
						snapID = snap.ID
						if st, err = snapshotStatement(v, snapID, now); err != nil {
							t.Fatal(err)
						}
					} else {
						st = it.Statement(op == person.Approve, now)
					}
					d := Decision{By: "alice", Why: "because", Now: now}
					switch sc {
					case signed:
						d.Signer = alice
					case forged:
						s, _ := alice.Sign(st)
						s.Sig[7] ^= 0x40
						d.Signature = &s
					case otherKey:
						d.Signer = mallory
					case stale:
						other := st
						other.Content = "sha256:00"
						s, _ := alice.Sign(other)
						d.Signature = &s
					}
					before := readFile(t, v, it.Path)
					var err error
					var done Item
					switch op {
					case person.Approve:
						done, err = Approve(v, it.ID, d)
					case person.Reject:
						done, err = Reject(v, it.ID, d)
					case person.Rollback:
						_, err = RollbackSigned(v, snapID, d)
					}
					wantOK := sc == signed || (!on && sc == unsigned)
					if (err == nil) != wantOK {
						t.Fatalf("err = %v, want ok=%v", err, wantOK)
					}
					if !wantOK {
						if !errors.Is(err, ErrUnsigned) || !errors.Is(err, vault.ErrRefused) {
							t.Fatalf("refusal %v does not wrap ErrUnsigned and ErrRefused", err)
						}
						if strings.Contains(err.Error(), "NEXUS_AGENT") {
							t.Fatalf("refusal tells how to get around it: %v", err)
						}
						if got := readFile(t, v, it.Path); got != before {
							t.Fatal("a refused decision changed the pending item")
						}
						if exists(v, ArchivePath(it.ID)) || exists(v, it.Target) {
							t.Fatal("a refused decision archived or applied the item")
						}
						if ins, _ := Unfinished(v); len(ins) != 0 {
							t.Fatalf("a refused decision left intents %v", ins)
						}
						return
					}
					if op == person.Rollback {
						return
					}
					archived, err := Get(v, it.ID)
					if err != nil {
						t.Fatal(err)
					}
					if done.Path != ArchivePath(it.ID) || archived.Path != ArchivePath(it.ID) {
						t.Fatalf("not archived: %+v", done)
					}
					verr := VerifyDecision(v, archived)
					if sc == signed {
						if archived.SignedBy != "alice" || verr != nil {
							t.Fatalf("archived signed_by %q, verify %v", archived.SignedBy, verr)
						}
						// Any change to what was decided breaks it.
						archived.Body += " And more."
						if VerifyDecision(v, archived) == nil {
							t.Fatal("a changed body still verifies")
						}
					} else if archived.Signature != "" || !errors.Is(verr, ErrUnsigned) {
						t.Fatalf("unsigned decision: signature %q, verify %v", archived.Signature, verr)
					}
				})
			}
		}
	}
}

// TestObsidianApprovalWaitsForSignature: with the setting on, status:
// approved set in a file is not carried out; a signed Approve (what
// 'nexus review sign' does) is.
func TestObsidianApprovalWaitsForSignature(t *testing.T) {
	alice, _ := keys(t)
	v := mustVault(t)
	trustAlice(t, v)
	requirePersonKey(t, v, true)
	it := mustRetain(t, v, "lyra", fact("tea"), t0)
	data := strings.Replace(readFile(t, v, it.Path), "status: pending", "status: approved", 1)
	if err := os.WriteFile(v.MustPath(it.Path), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Reconcile(v, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Approved) != 0 || len(res.Unsigned) != 1 || res.Unsigned[0].ID != it.ID {
		t.Fatalf("reconcile = %+v", res)
	}
	if exists(v, it.Target) || !exists(v, it.Path) {
		t.Fatal("an unsigned approval set in Obsidian was applied")
	}
	done, err := Approve(v, it.ID, Decision{By: "alice", Now: t0.Add(2 * time.Hour), Signer: alice})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(v, done.Result) || VerifyDecision(v, mustGet(t, v, it.ID)) != nil {
		t.Fatalf("signed approval: %+v", done)
	}
}

func mustGet(tb testing.TB, v *vault.Vault, id string) Item {
	tb.Helper()
	it, err := Get(v, id)
	if err != nil {
		tb.Fatal(err)
	}
	return it
}

// TestRecoverKeepsTheSignature: a signed approval killed after its intent
// is finished by the next run with the signature it recorded, and an
// intent whose signature was tampered with is not finished.
func TestRecoverKeepsTheSignature(t *testing.T) {
	alice, _ := keys(t)
	for _, tamper := range []bool{false, true} {
		t.Run(map[bool]string{false: "intact", true: "tampered"}[tamper], func(t *testing.T) {
			v := mustVault(t)
			trustAlice(t, v)
			requirePersonKey(t, v, true)
			it := mustRetain(t, v, "lyra", fact("tea"), t0)
			now := t0.Add(time.Hour)
			s, _ := alice.Sign(it.Statement(true, now))
			if tamper {
				s.Sig[0] ^= 1
			}
			if _, err := beginIntent(v, Intent{Op: IntentApprove, ID: it.ID, By: "alice", Now: now, Signature: &s}); err != nil {
				t.Fatal(err)
			}
			_, err := Recover(v)
			if tamper {
				if err == nil || exists(v, it.Target) {
					t.Fatalf("tampered intent finished: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if VerifyDecision(v, mustGet(t, v, it.ID)) != nil || !exists(v, it.Target) {
				t.Fatal("recovered approval lost its signature")
			}
		})
	}
}
