package person

import (
	"crypto/ed25519"
	"fmt"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Decisions a person signs.
const (
	Approve  = "approve"
	Reject   = "reject"
	Rollback = "rollback"
)

// Statement is what a person's signature covers: one decision on one
// item (a review item, or a snapshot for a rollback), the hash of the
// content decided on, and when.
type Statement struct {
	Item     string
	Kind     string
	Decision string
	// Content is "sha256:HEX" of what was decided on.
	Content string
	Time    time.Time
}

// message is the exact bytes signed: a fixed header, then one field a
// line. Fields hold no newlines (they are checked before signing).
func (s Statement) message() ([]byte, error) {
	for _, f := range []string{s.Item, s.Kind, s.Decision, s.Content} {
		if f == "" || strings.ContainsAny(f, "\r\n") {
			return nil, fmt.Errorf("a decision to sign needs item, kind, decision and content, each one line: %w", vault.ErrInvalid)
		}
	}
	if s.Time.IsZero() {
		return nil, fmt.Errorf("a decision to sign needs a time: %w", vault.ErrInvalid)
	}
	return []byte("nexus person decision v1\nitem: " + s.Item + "\nkind: " + s.Kind + "\ndecision: " + s.Decision +
		"\ncontent: " + s.Content + "\ntime: " + s.Time.UTC().Format(time.RFC3339) + "\n"), nil
}

// Signature is a person's signature of a [Statement].
type Signature struct {
	// By names the key (its .pub file's name).
	By  string `json:"by"`
	Sig []byte `json:"sig"`
}

// Encode is the signature as it is stored: base64.
func (s Signature) Encode() string { return b64.EncodeToString(s.Sig) }

// DecodeSignature reads a stored signature.
func DecodeSignature(by, sig string) (Signature, error) {
	b, err := b64.DecodeString(strings.TrimSpace(sig))
	if err != nil || len(b) != ed25519.SignatureSize {
		return Signature{}, fmt.Errorf("signature is not %d bytes of base64: %w", ed25519.SignatureSize, vault.ErrInvalid)
	}
	return Signature{By: strings.TrimSpace(by), Sig: b}, nil
}

// Sign signs st.
func (k *Key) Sign(st Statement) (Signature, error) {
	msg, err := st.message()
	if err != nil {
		return Signature{}, err
	}
	return Signature{By: k.Name, Sig: ed25519.Sign(k.priv, msg)}, nil
}

// Verify checks that sig signs st with a key this machine trusts (one it
// pinned: its own, or one trusted with 'nexus person trust'). The public
// key files in the vault are not consulted: whoever can write the vault
// can change them.
func Verify(v *vault.Vault, sig Signature, st Statement) error {
	msg, err := st.message()
	if err != nil {
		return err
	}
	if CheckName(sig.By) != nil {
		return fmt.Errorf("signed by %q, which is not a key name: %w", sig.By, ErrUnsigned)
	}
	pins, err := pinned(v)
	if err != nil {
		return err
	}
	pub, ok := pins[sig.By]
	if !ok {
		return fmt.Errorf("signed by %s, a key this machine does not trust: %w", sig.By, ErrUnsigned)
	}
	if len(sig.Sig) != ed25519.SignatureSize || !ed25519.Verify(pub, msg, sig.Sig) {
		return fmt.Errorf("the signature by %s does not match this decision: %w", sig.By, ErrUnsigned)
	}
	return nil
}
