package livelog

import (
	"fmt"
	"testing"

	"github.com/nexus-memory/nexus/identity"
)

// benchSigs signs n messages with lyra's and ella's keys.
func benchSigs(b *testing.B, n int) (identity.Keyring, []sigJob) {
	b.Helper()
	v := mustVault(b)
	kr := identity.Keyring{}
	var signers []*identity.Signer
	for _, name := range []string{"lyra", "ella"} {
		s, err := identity.LoadSigner(v, name)
		if err != nil {
			b.Fatal(err)
		}
		signers = append(signers, s)
		kr[name] = []identity.DeviceKey{{Key: s.PublicKey()}}
	}
	js := make([]sigJob, n)
	for i := range js {
		s := signers[i%2]
		msg := []byte(fmt.Sprintf("entry %d", i))
		js[i] = sigJob{agent: s.Agent, pub: s.PublicKey(), msg: msg, sig: s.Sign(msg)}
	}
	return kr, js
}

// BenchmarkBatchVerify checks 256 signatures as one batch, the way
// Verify does; BenchmarkBatchSingle checks them one by one for comparison.
func BenchmarkBatchVerify(b *testing.B) {
	_, js := benchSigs(b, 256)
	var pc pointCache
	for b.Loop() {
		if !pc.verifyBatch(js) {
			b.Fatal("valid batch rejected")
		}
	}
	b.ReportMetric(float64(len(js)*b.N)/b.Elapsed().Seconds(), "sigs/s")
}

func BenchmarkBatchSingle(b *testing.B) {
	kr, js := benchSigs(b, 256)
	for b.Loop() {
		for _, j := range js {
			if !kr.Verify(j.agent, j.msg, j.sig) {
				b.Fatal("valid signature rejected")
			}
		}
	}
	b.ReportMetric(float64(len(js)*b.N)/b.Elapsed().Seconds(), "sigs/s")
}
