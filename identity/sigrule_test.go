package identity

import (
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"testing"
)

// TestVerifySignatureHonest: on signatures crypto/ed25519 makes, and on
// those with one bit flipped, the rule agrees with crypto/ed25519.
func TestVerifySignatureHonest(t *testing.T) {
	for i := range 32 {
		seed := make([]byte, ed25519.SeedSize)
		seed[0], seed[1] = byte(i), 0x5a
		key := ed25519.NewKeyFromSeed(seed)
		pub := key.Public().(ed25519.PublicKey)
		msg := []byte(fmt.Sprintf("message %d", i))
		sig := ed25519.Sign(key, msg)
		cases := []struct {
			name          string
			pub, msg, sig []byte
		}{
			{"as signed", pub, msg, sig},
			{"R bit flipped", pub, msg, flip(sig, i%32)},
			{"S bit flipped", pub, msg, flip(sig, 32+i%28)},
			{"key bit flipped", flip(pub, i%32), msg, sig},
			{"message changed", pub, append(msg, '.'), sig},
		}
		for _, c := range cases {
			if got, want := VerifySignature(c.pub, c.msg, c.sig), ed25519.Verify(c.pub, c.msg, c.sig); got != want {
				t.Errorf("key %d, %s: VerifySignature = %v, crypto/ed25519 = %v", i, c.name, got, want)
			}
		}
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte{}, b...)
	c[i] ^= 1
	return c
}

func TestSignaturePoint(t *testing.T) {
	cases := []struct {
		name string
		hex  string
		ok   bool
	}{
		{"base point", "5866666666666666666666666666666666666666666666666666666666666666", true},
		{"identity", "0100000000000000000000000000000000000000000000000000000000000000", false},
		{"identity, sign bit set", "0100000000000000000000000000000000000000000000000000000000000080", false},
		{"order 2", "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", false},
		{"order 8", "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", false},
		{"y = p+1 (the identity)", "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", false},
		{"y = p+3", "f0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", false},
		{"y = 3", "0300000000000000000000000000000000000000000000000000000000000000", true},
		{"not on the curve", "0200000000000000000000000000000000000000000000000000000000000000", false},
		{"short", "5866", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := hex.DecodeString(c.hex)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := SignaturePoint(b); ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
		})
	}
}
