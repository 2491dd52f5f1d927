package livelog

import (
	"crypto/rand"
	"crypto/sha512"

	"filippo.io/edwards25519"

	"github.com/nexus-memory/nexus/identity"
)

// Batch verification of ed25519 signatures, about twice as fast per
// signature as checking them one by one (the standard library has no batch
// API, hence filippo.io/edwards25519). For random 128-bit z_i it checks
//
//	[8]( -(Σ z_i·S_i)·B + Σ z_i·R_i + Σ_agents (Σ z_i·k_i)·A ) = 0
//
// with k_i = SHA-512(R_i || A_i || M_i). Signatures from one agent share its
// A, so the sum has one term per agent, not per signature. If the batch
// fails, the caller checks each signature alone with [identity.Keyring] to
// find the bad ones, so the batch only ever speeds up the common case where
// everything is intact.

// batchKeys holds each agent's decoded public key point.
type batchKeys map[string]*edwards25519.Point

func newBatchKeys(kr identity.Keyring) batchKeys {
	bk := batchKeys{}
	for name, pub := range kr {
		if p, err := new(edwards25519.Point).SetBytes(pub); err == nil {
			bk[name] = p
		}
	}
	return bk
}

// verifyBatch reports whether every signature in jobs is valid. false means
// at least one may be bad (or could not be batched): check them one by one.
func (bk batchKeys) verifyBatch(kr identity.Keyring, jobs []sigJob) bool {
	if len(jobs) == 0 {
		return true
	}
	zbytes := make([]byte, 16*len(jobs))
	if _, err := rand.Read(zbytes); err != nil {
		return false
	}
	scalars := make([]*edwards25519.Scalar, 0, len(jobs)+8)
	points := make([]*edwards25519.Point, 0, len(jobs)+8)
	sumZS := edwards25519.NewScalar()
	perAgent := map[string]*edwards25519.Scalar{}
	var buf [32]byte
	h := sha512.New()
	var digest [64]byte
	for i, j := range jobs {
		if _, ok := bk[j.agent]; !ok || len(j.sig) != 64 {
			return false
		}
		R, err := new(edwards25519.Point).SetBytes(j.sig[:32])
		if err != nil {
			return false
		}
		S, err := edwards25519.NewScalar().SetCanonicalBytes(j.sig[32:])
		if err != nil {
			return false
		}
		h.Reset()
		h.Write(j.sig[:32])
		h.Write(kr[j.agent])
		h.Write(j.msg)
		k, err := edwards25519.NewScalar().SetUniformBytes(h.Sum(digest[:0]))
		if err != nil {
			return false
		}
		clear(buf[:])
		copy(buf[:16], zbytes[16*i:16*i+16])
		z, err := edwards25519.NewScalar().SetCanonicalBytes(buf[:])
		if err != nil {
			return false
		}
		sumZS.MultiplyAdd(z, S, sumZS)
		scalars = append(scalars, z)
		points = append(points, R)
		a, ok := perAgent[j.agent]
		if !ok {
			a = edwards25519.NewScalar()
			perAgent[j.agent] = a
		}
		a.MultiplyAdd(z, k, a)
	}
	for name, a := range perAgent {
		scalars = append(scalars, a)
		points = append(points, bk[name])
	}
	scalars = append(scalars, edwards25519.NewScalar().Negate(sumZS))
	points = append(points, edwards25519.NewGeneratorPoint())
	sum := new(edwards25519.Point).VarTimeMultiScalarMult(scalars, points)
	sum.MultByCofactor(sum)
	return sum.Equal(edwards25519.NewIdentityPoint()) == 1
}
