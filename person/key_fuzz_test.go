package person

import (
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

func FuzzParseKeyFile(f *testing.F) {
	v, _, err := vault.Init(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	if _, err := Create(v, "alice", []byte("correct horse battery"), time.Now()); err != nil {
		f.Fatal(err)
	}
	f.Add(readFile(f, v.MustPath(keyPath("alice"))))
	f.Add([]byte(keyHeader + "\nname: a\niterations: -1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseKeyFile(data)
		if err != nil {
			return
		}
		if CheckName(s.name) != nil || len(s.public) != 32 || len(s.salt) != 16 || len(s.nonce) != 12 || len(s.box) != 48 || s.iterations < minIterations {
			t.Fatalf("accepted %q as %+v", data, s)
		}
	})
}
