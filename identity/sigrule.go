package identity

import (
	"crypto/ed25519"
	"crypto/sha512"

	"filippo.io/edwards25519"
)

// The one signature rule. Nexus checks a signature alone ([VerifySignature],
// [Keyring.Verify]) and in batches (livelog's verifier), and both must give
// the same verdict, or whether an entry passes would depend on which batch
// it lands in. A batch check is a random linear combination of the
// signature equations; without the cofactor it cannot tell a signature
// whose R carries a small-order component from a valid one (that part
// cancels with probability 1/2), and checking each R's subgroup would cost
// more than the batch saves. So both use the cofactored equation
//
//	[8]([S]B - R - [k]A) = 0,   k = SHA-512(R || A || M)
//
// (the ZIP-215 equation), with stricter encodings than ZIP-215: S must be
// below the group order, R and A must be canonical encodings of points that
// are not of small order. A key of small order would verify any message,
// and a signer never makes a small-order R. Every signature crypto/ed25519
// makes is valid under this rule. The rule also accepts an R with a
// small-order part, which crypto/ed25519 refuses, but only the key's holder
// can make one (k covers R), so nobody else gains a second valid signature
// of an entry.

// SignaturePoint decodes R or A under the rule: a canonical encoding of a
// curve point that is not of small order. ok is false otherwise.
func SignaturePoint(b []byte) (p *edwards25519.Point, ok bool) {
	if len(b) != 32 || !canonicalY(b) {
		return nil, false
	}
	p, err := new(edwards25519.Point).SetBytes(b)
	if err != nil {
		return nil, false
	}
	if new(edwards25519.Point).MultByCofactor(p).Equal(edwards25519.NewIdentityPoint()) == 1 {
		return nil, false
	}
	return p, true
}

// canonicalY reports whether b encodes y below p = 2^255-19. (The other
// non-canonical encodings, x = 0 with the sign bit set, are of y = ±1,
// points of small order, refused anyway.)
func canonicalY(b []byte) bool {
	// y >= p only if bytes 1..31 are all ones (bit 255 masked) and byte 0
	// is 0xed or more.
	if b[31]&0x7f != 0x7f || b[0] < 0xed {
		return true
	}
	for _, c := range b[1:31] {
		if c != 0xff {
			return true
		}
	}
	return false
}

// SignatureScalars splits sig into R (decoded under the rule) and S; ok is
// false if sig is malformed, R is not acceptable or S is not below the
// group order.
func SignatureScalars(sig []byte) (R *edwards25519.Point, S *edwards25519.Scalar, ok bool) {
	if len(sig) != ed25519.SignatureSize {
		return nil, nil, false
	}
	R, ok = SignaturePoint(sig[:32])
	if !ok {
		return nil, nil, false
	}
	S, err := edwards25519.NewScalar().SetCanonicalBytes(sig[32:])
	if err != nil {
		return nil, nil, false
	}
	return R, S, true
}

// SignatureChallenge is k = SHA-512(R || A || M) reduced mod the group
// order, over the encodings as given.
func SignatureChallenge(pub, msg, sig []byte) *edwards25519.Scalar {
	h := sha512.New()
	h.Write(sig[:32])
	h.Write(pub)
	h.Write(msg)
	var digest [64]byte
	k, _ := edwards25519.NewScalar().SetUniformBytes(h.Sum(digest[:0])) // 64 bytes: cannot fail
	return k
}

// VerifySignature reports whether sig is pub's signature of msg under the
// rule above.
func VerifySignature(pub, msg, sig []byte) bool {
	A, ok := SignaturePoint(pub)
	if !ok {
		return false
	}
	R, S, ok := SignatureScalars(sig)
	if !ok {
		return false
	}
	k := SignatureChallenge(pub, msg, sig)
	// [S]B - [k]A - R, times the cofactor.
	p := new(edwards25519.Point).VarTimeDoubleScalarBaseMult(k, new(edwards25519.Point).Negate(A), S)
	p.Subtract(p, R)
	p.MultByCofactor(p)
	return p.Equal(edwards25519.NewIdentityPoint()) == 1
}
