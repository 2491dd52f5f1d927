package livelog

import (
	"fmt"
	"testing"

	"github.com/nexus-memory/nexus/identity"
)

func TestVerifyBatch(t *testing.T) {
	v := mustVault(t)
	var bk pointCache
	var err error
	signers := map[string]*identity.Signer{}
	for _, n := range []string{"lyra", "ella", "mallory"} {
		if signers[n], err = identity.LoadSigner(v, n); err != nil {
			t.Fatal(err)
		}
	}
	good := func(n int) []sigJob {
		var js []sigJob
		for i := range n {
			agent := []string{"lyra", "ella", "mallory"}[i%3]
			msg := []byte(fmt.Sprintf("message %d", i))
			js = append(js, sigJob{agent: agent, pub: signers[agent].PublicKey(), msg: msg, sig: signers[agent].Sign(msg)})
		}
		return js
	}
	for _, n := range []int{1, 2, 7, 256} {
		if !bk.verifyBatch(good(n)) {
			t.Fatalf("valid batch of %d rejected", n)
		}
	}
	cases := []struct {
		name   string
		tamper func(js []sigJob)
	}{
		{"message edited", func(js []sigJob) { js[4].msg = []byte("message X") }},
		{"other agent's key", func(js []sigJob) { js[4].sig = signers["mallory"].Sign(js[4].msg) }},
		{"S flipped", func(js []sigJob) { js[4].sig = append([]byte{}, js[4].sig...); js[4].sig[40] ^= 1 }},
		{"R flipped", func(js []sigJob) { js[4].sig = append([]byte{}, js[4].sig...); js[4].sig[3] ^= 1 }},
		{"S not canonical", func(js []sigJob) { js[4].sig = append([]byte{}, js[4].sig...); js[4].sig[63] |= 0xf0 }},
		{"short signature", func(js []sigJob) { js[4].sig = js[4].sig[:63] }},
		{"no key", func(js []sigJob) { js[4].pub = nil }},
		{"two signatures swapped", func(js []sigJob) { js[3].sig, js[6].sig = js[6].sig, js[3].sig }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			js := good(9)
			if js[4].agent == "mallory" {
				t.Fatal("test setup: job 4 must not be mallory's")
			}
			c.tamper(js)
			if bk.verifyBatch(js) {
				t.Fatal("tampered batch accepted")
			}
		})
	}
}
