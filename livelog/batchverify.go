package livelog

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"sync"

	"filippo.io/edwards25519"

	"github.com/nexus-memory/nexus/identity"
)

// Batch verification of ed25519 signatures, two to four times as fast per
// signature as checking them one by one (the standard library has no batch
// API, hence filippo.io/edwards25519). For random 128-bit z_i it checks
//
//	[8]( -(Σ z_i·S_i)·B + Σ z_i·R_i + Σ_agents (Σ z_i·k_i)·A ) = 0
//
// with k_i = SHA-512(R_i || A_i || M_i): the cofactored equation of
// [identity.VerifySignature], whose encoding rules (canonical S, canonical R
// and A not of small order) it applies through the same functions, so a
// signature gets one verdict alone or in any batch (a cofactorless batch
// could not promise that). Signatures from one agent share its A, so the
// sum has one term per agent, not per signature. If the batch fails, the
// caller checks each signature alone with [identity.Keyring] to find the
// bad ones, so the batch only ever speeds up the common case where
// everything is intact.

// pointCache decodes each public key once.
type pointCache struct {
	mu sync.Mutex // protects m
	m  map[string]*edwards25519.Point
}

func (pc *pointCache) point(pub []byte) (*edwards25519.Point, bool) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if p, ok := pc.m[string(pub)]; ok {
		return p, p != nil
	}
	if pc.m == nil {
		pc.m = map[string]*edwards25519.Point{}
	}
	p, ok := identity.SignaturePoint(pub)
	pc.m[string(pub)] = p // nil if refused
	return p, ok
}

// verifyBatch reports whether every signature in jobs is valid under the
// key it names. false means at least one may be bad (or could not be
// batched): check them one by one.
func (pc *pointCache) verifyBatch(jobs []sigJob) bool {
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
	perKey := map[string]*edwards25519.Scalar{}
	var buf [32]byte
	for i, j := range jobs {
		if _, ok := pc.point(j.pub); !ok {
			return false
		}
		R, S, ok := identity.SignatureScalars(j.sig)
		if !ok {
			return false
		}
		k := identity.SignatureChallenge(j.pub, j.msg, j.sig)
		clear(buf[:])
		copy(buf[:16], zbytes[16*i:16*i+16])
		z, err := edwards25519.NewScalar().SetCanonicalBytes(buf[:])
		if err != nil {
			return false
		}
		sumZS.MultiplyAdd(z, S, sumZS)
		scalars = append(scalars, z)
		points = append(points, R)
		a, ok := perKey[string(j.pub)]
		if !ok {
			a = edwards25519.NewScalar()
			perKey[string(j.pub)] = a
		}
		a.MultiplyAdd(z, k, a)
	}
	for pub, a := range perKey {
		p, _ := pc.point([]byte(pub))
		scalars = append(scalars, a)
		points = append(points, p)
	}
	scalars = append(scalars, edwards25519.NewScalar().Negate(sumZS))
	points = append(points, edwards25519.NewGeneratorPoint())
	sum := new(edwards25519.Point).VarTimeMultiScalarMult(scalars, points)
	sum.MultByCofactor(sum)
	return sum.Equal(edwards25519.NewIdentityPoint()) == 1
}

// startSigWorkers starts one signature checker per core. Send batches on
// jobs; stop closes it and waits; then *bads holds a finding for every
// signature that does not verify with any of its agent's keys.
func startSigWorkers(kr identity.Keyring) (jobs chan sigBatch, stop func(), bads *[]Finding) {
	workers := runtime.GOMAXPROCS(0)
	jobs = make(chan sigBatch, workers*2)
	var (
		mu  sync.Mutex // protects out
		out []Finding
		wg  sync.WaitGroup
		pc  pointCache
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				if pc.verifyBatch(b) {
					continue
				}
				var mine []Finding
				for _, j := range b {
					if j.keys != nil {
						// A feed's writer: only its pinned keys count.
						if !verifies(j.keys, j.msg, j.sig) {
							mine = append(mine, j.explain(j.f, j.msg, j.sig))
						}
						continue
					}
					if kr.Verify(j.agent, j.msg, j.sig) {
						continue
					}
					mine = append(mine, sigFailure(kr, j.f, j.agent, j.msg, j.sig))
				}
				mu.Lock()
				out = append(out, mine...)
				mu.Unlock()
			}
		}()
	}
	stop = func() { close(jobs); wg.Wait() }
	return jobs, stop, &out
}

// sigFailure names an entry (f) whose signature does not verify with its
// agent's keys: made with another agent's key, or by an agent with no
// key, it is forged; else it was edited after it was signed.
func sigFailure(kr identity.Keyring, f Finding, agent string, msg, sig []byte) Finding {
	f.Status, f.Detail = StatusEdited, "signature does not verify: the entry was changed after it was signed"
	if len(sig) != 64 {
		f.Detail = "signature is malformed"
	} else if who, found := kr.Signer(msg, sig); found && who != agent {
		f.Status, f.Detail = StatusForged, fmt.Sprintf("signed with %s's key, not %s's", who, agent)
	} else if _, known := kr[agent]; !known {
		f.Status, f.Detail = StatusForged, fmt.Sprintf("agent %s has no public key in the vault", agent)
	}
	return f
}
