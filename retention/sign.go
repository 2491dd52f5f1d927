package retention

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/vault"
)

// With review.require_person_key set (SPEC §7), every decision needs a
// person's signature: retention checks it here, whoever calls, not only
// the CLI. What is signed is a [person.Statement]: the item's id and
// kind, the decision, the hash of the content decided on ([ContentHash])
// and the decision's time. The archived item carries the signature
// (signed_by:, signature:), and the applied fact names its item in
// source: (review:ID), so doctor can check every approval and every fact
// approved through review.

// RequirePersonKey reports whether the vault's config asks for signed
// decisions.
func RequirePersonKey(v *vault.Vault) bool { return v.Config().Review.RequirePersonKey }

// ContentHash is "sha256:HEX" of what a decision on it decides: the
// item's id, agent, kind, target, fact fields, operations and text, as a
// person would read them (after an edit). It is the same for the pending
// file and for its archived copy.
func ContentHash(it Item) string {
	c := struct {
		ID, Agent, Kind, Target, Name, Description, Type string
		Update                                           bool
		Ops                                              any
		Body                                             string
	}{it.ID, it.Agent, it.Kind, it.Target, it.Name, it.Description, it.FactType, it.Update, it.Ops, it.Body}
	data, _ := json.Marshal(c) // strings, bools and agents.Op: cannot fail
	return fmt.Sprintf("sha256:%x", sha256.Sum256(data))
}

// Statement is what a person signs to decide it: approve when approve,
// else reject, at now.
func (it Item) Statement(approve bool, now time.Time) person.Statement {
	d := person.Reject
	if approve {
		d = person.Approve
	}
	return person.Statement{Item: it.ID, Kind: it.Kind, Decision: d, Content: ContentHash(it), Time: now.UTC().Truncate(time.Second)}
}

// VerifyDecision checks a decided (archived) item's signature: that a key
// this machine trusts signed this decision on this content at this time.
func VerifyDecision(v *vault.Vault, it Item) error {
	if it.Signature == "" {
		return fmt.Errorf("%s was %s without a person's signature: %w", it.ID, it.Status, ErrUnsigned)
	}
	sig, err := person.DecodeSignature(it.SignedBy, it.Signature)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", it.ID, ErrUnsigned, err)
	}
	if err := person.Verify(v, sig, it.Statement(it.Status == StatusApproved, it.DecidedAt)); err != nil {
		return fmt.Errorf("%s: %w", it.ID, err)
	}
	return nil
}

// signDecision returns the signature a decision carries: d.Signature
// (recorded by an earlier, interrupted run) or one d.Signer makes now;
// either must verify. Without either it is refused when the config asks
// for a signature, and returns nil otherwise.
func signDecision(v *vault.Vault, st person.Statement, d Decision) (*person.Signature, error) {
	sig := d.Signature
	if sig == nil && d.Signer != nil {
		s, err := d.Signer.Sign(st)
		if err != nil {
			return nil, err
		}
		sig = &s
	}
	if sig == nil {
		if RequirePersonKey(v) {
			return nil, fmt.Errorf("the %s of %s needs a person's signature (review.require_person_key is on), and none was given: %w: %w", st.Decision, st.Item, ErrUnsigned, vault.ErrRefused)
		}
		return nil, nil
	}
	// A signature given is checked with the setting off too: none that
	// does not verify is ever recorded.
	if err := person.Verify(v, *sig, st); err != nil {
		return nil, fmt.Errorf("the %s of %s: %w: %w", st.Decision, st.Item, err, vault.ErrRefused)
	}
	return sig, nil
}

// snapshotStatement is what a person signs to roll back to snapshot id:
// the hash of its manifest, which names and hashes every stored file.
func snapshotStatement(v *vault.Vault, id string, now time.Time) (person.Statement, error) {
	if _, err := LoadSnapshot(v, id); err != nil { // checks the id, too
		return person.Statement{}, err
	}
	data, err := os.ReadFile(filepath.Join(snapshotDir(v, id), manifestName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return person.Statement{}, fmt.Errorf("snapshot %s: %w", id, ErrNoSnapshot)
		}
		return person.Statement{}, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	return person.Statement{Item: id, Kind: "snapshot", Decision: person.Rollback,
		Content: fmt.Sprintf("sha256:%x", sha256.Sum256(data)), Time: now.UTC().Truncate(time.Second)}, nil
}

// UnsignedDecision is an archived decision without a valid signature.
type UnsignedDecision struct {
	Item   Item   `json:"item"`
	Reason string `json:"reason"`
}

// UnsignedDecisions lists the archived approvals (and rejections) that
// carry no valid person signature by a key this machine trusts, newest
// decision first. Callers ask only when review.require_person_key is on.
func UnsignedDecisions(v *vault.Vault) ([]UnsignedDecision, error) {
	des, err := os.ReadDir(v.MustPath(vault.ArchiveDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", vault.ArchiveDir, err)
	}
	var out []UnsignedDecision
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") || vault.IsConflictCopy(name) {
			continue
		}
		it, err := readItem(v, vault.ArchiveDir+"/"+name)
		if err != nil || (it.Status != StatusApproved && it.Status != StatusRejected) {
			continue
		}
		if verr := VerifyDecision(v, it); verr != nil {
			out = append(out, UnsignedDecision{Item: it, Reason: verr.Error()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Item.DecidedAt.After(out[j].Item.DecidedAt) })
	return out, nil
}
