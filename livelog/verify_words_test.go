package livelog

import (
	"os"
	"testing"
)

// TestVerifyNamesOneOrMany: a finding about one missing entry says
// "entry N ... is/was", about several "entries N-M ... are/were".
func TestVerifyNamesOneOrMany(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  func(data []byte, es []Entry) []byte
		want string
	}{
		{"last one cut", func(d []byte, es []Entry) []byte { return d[:es[3].Offset] }, "entry 4 of lyra@box was cut off"},
		{"last two cut", func(d []byte, es []Entry) []byte { return d[:es[2].Offset] }, "entries 3-4 of lyra@box were cut off"},
		{"one deleted inside", func(d []byte, es []Entry) []byte {
			return append(append([]byte{}, d[:es[1].Offset]...), d[es[1].End:]...)
		}, "entry 2 of lyra@box is missing before this one"},
		{"two deleted inside", func(d []byte, es []Entry) []byte {
			return append(append([]byte{}, d[:es[1].Offset]...), d[es[2].End:]...)
		}, "entries 2-3 of lyra@box are missing before this one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := mustVault(t)
			l := mustLog(t, v)
			for _, s := range []string{"one", "two", "three", "four"} {
				mustAppend(t, l, "lyra", s)
			}
			path := feedFile(l, "lyra")
			data, _ := os.ReadFile(path)
			if err := os.WriteFile(path, tc.cut(data, ParseFeed("x", data)), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := mustVerify(t, l); r.OK(false) || !hasFinding(r, StatusRemoved, tc.want) {
				t.Fatalf("want %q: %+v", tc.want, r.Findings)
			}
		})
	}
}
