package livelog

import (
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"slices"
	"testing"

	"filippo.io/edwards25519"

	"github.com/nexus-memory/nexus/identity"
)

// sigVector is one signature the single and the batch check must judge
// alike, wherever it sits in a batch.
type sigVector struct {
	name  string
	pub   []byte
	msg   []byte
	sig   []byte
	valid bool // under the one rule of identity.VerifySignature
}

func mustPoint(t *testing.T, hexBytes string) *edwards25519.Point {
	t.Helper()
	b, err := hex.DecodeString(hexBytes)
	if err != nil {
		t.Fatal(err)
	}
	p, err := new(edwards25519.Point).SetBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// signTorsion signs msg with key like crypto/ed25519 would, except that
// R = [r]B + torsion (a signer with the key can do that): the cofactored
// equation holds, the cofactorless one does not.
func signTorsion(t *testing.T, key ed25519.PrivateKey, msg []byte, torsion *edwards25519.Point) []byte {
	t.Helper()
	h := sha512.Sum512(key.Seed())
	a, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		t.Fatal(err)
	}
	var rb [64]byte
	rb[0] = 7
	r, _ := edwards25519.NewScalar().SetUniformBytes(rb[:])
	R := new(edwards25519.Point).ScalarBaseMult(r)
	R.Add(R, torsion)
	sig := R.Bytes()
	k := identity.SignatureChallenge(key.Public().(ed25519.PublicKey), msg, append(sig, make([]byte, 32)...))
	S := edwards25519.NewScalar().MultiplyAdd(k, a, r)
	return append(sig, S.Bytes()...)
}

// sigVectors builds the edge cases around a valid signature by key.
func sigVectors(t *testing.T, key ed25519.PrivateKey) []sigVector {
	t.Helper()
	const (
		order2 = "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f" // (0, -1)
		order8 = "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a"
		// y = p+3: a point not of small order, encoded non-canonically.
		nonCanonical = "f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"
		identityPt   = "0100000000000000000000000000000000000000000000000000000000000000"
	)
	msg := []byte("entry 7 of lyra's feed")
	pub := []byte(key.Public().(ed25519.PublicKey))
	sig := ed25519.Sign(key, msg)
	with := func(f func(sig []byte)) []byte {
		c := slices.Clone(sig)
		f(c)
		return c
	}
	torsionR := func(torsion string) []byte {
		sig := signTorsion(t, key, msg, mustPoint(t, torsion))
		if ed25519.Verify(pub, msg, sig) {
			t.Fatal("test setup: crypto/ed25519 should refuse R with a small-order part")
		}
		return sig
	}
	if ed25519.Verify(pub, msg, signTorsion(t, key, msg, edwards25519.NewIdentityPoint())) != true {
		t.Fatal("test setup: signTorsion without torsion should sign like crypto/ed25519")
	}
	// S + L, still below 2^256.
	var sPlusL [32]byte
	l := []byte{0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14, 31: 0x10}
	carry := 0
	for i := range 32 {
		v := int(sig[32+i]) + int(l[i]) + carry
		sPlusL[i], carry = byte(v), v>>8
	}
	// A key of small order (the identity) "signs" any message with
	// R = [s]B, S = s: crypto/ed25519 accepts it.
	var seed [64]byte
	seed[0] = 42
	s42, _ := edwards25519.NewScalar().SetUniformBytes(seed[:])
	smallA, _ := hex.DecodeString(identityPt)
	smallASig := append(new(edwards25519.Point).ScalarBaseMult(s42).Bytes(), s42.Bytes()...)
	if !ed25519.Verify(smallA, msg, smallASig) {
		t.Fatal("test setup: the small-order key's signature should pass crypto/ed25519")
	}
	nonCanonicalA, _ := hex.DecodeString(nonCanonical)
	order8R, _ := hex.DecodeString(order8)
	return []sigVector{
		{"valid", pub, msg, sig, true},
		{"other message", pub, []byte("entry 8"), sig, false},
		// Only the key's holder can make these; the cofactored equation
		// accepts them alone and in a batch (crypto/ed25519 would not).
		{"R plus an order-2 point", pub, msg, torsionR(order2), true},
		{"R plus an order-8 point", pub, msg, torsionR(order8), true},
		{"R plus an order-2 point, other message", pub, []byte("entry 8"), torsionR(order2), false},
		{"S not canonical (S+L)", pub, msg, with(func(c []byte) { copy(c[32:], sPlusL[:]) }), false},
		{"R of small order", pub, msg, with(func(c []byte) { copy(c[:32], order8R) }), false},
		{"R not canonical", pub, msg, with(func(c []byte) { copy(c[:32], nonCanonicalA) }), false},
		{"A of small order", smallA, msg, smallASig, false},
		{"A not canonical", nonCanonicalA, msg, sig, false},
		{"short signature", pub, msg, sig[:63], false},
	}
}

// TestOneSignatureRule: a signature's verdict is the same checked alone
// and in a batch of any size at any position, and through the verifier's
// workers (batch, then one by one if the batch fails).
func TestOneSignatureRule(t *testing.T) {
	v := mustVault(t)
	ella, err := identity.LoadSigner(v, "ella")
	if err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	for _, vec := range sigVectors(t, key) {
		t.Run(vec.name, func(t *testing.T) {
			kr := identity.Keyring{
				"ella":   {{Key: ella.PublicKey()}},
				"vector": {{Key: vec.pub}},
			}
			single := kr.Verify("vector", vec.msg, vec.sig)
			if single != vec.valid {
				t.Fatalf("alone: valid = %v, want %v", single, vec.valid)
			}
			if got := identity.VerifySignature(vec.pub, vec.msg, vec.sig); got != single {
				t.Fatalf("VerifySignature = %v, Keyring.Verify = %v", got, single)
			}
			for _, size := range []int{1, 2, 3, 8, 64} {
				for pos := range size {
					if size == 64 && pos%21 != 0 && pos != size-1 {
						continue
					}
					js := make(sigBatch, size)
					for i := range js {
						msg := []byte(fmt.Sprintf("ella's entry %d", i))
						js[i] = sigJob{f: Finding{Seq: int64(i)}, agent: "ella", pub: ella.PublicKey(), msg: msg, sig: ella.Sign(msg)}
					}
					js[pos] = sigJob{f: Finding{Seq: int64(pos)}, agent: "vector", pub: vec.pub, msg: vec.msg, sig: vec.sig}
					var pc pointCache
					if got := pc.verifyBatch(js); got != single {
						t.Fatalf("batch of %d at %d: passes = %v, alone = %v", size, pos, got, single)
					}
					jobs, stop, bads := startSigWorkers(kr)
					jobs <- js
					stop()
					flagged := slices.ContainsFunc(*bads, func(f Finding) bool { return f.Seq == int64(pos) })
					if flagged == single || len(*bads) > 1 {
						t.Fatalf("batch of %d at %d: findings %+v, alone valid = %v", size, pos, *bads, single)
					}
				}
			}
		})
	}
}
