package vault

import (
	"fmt"
	"testing"
)

func TestUnknownConfigKeys(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       string // keys -> meant
	}{
		{"all known", "memory_char_limit: 3000\nreview:\n  write_approval: true\nagents:\n  lyra:\n    token_sha256: ab\nlock_timeout: 30s\n", "[] []"},
		{"typo at the top", "memory_char_limt: 3000\n", "[memory_char_limt] [memory_char_limit]"},
		{"nothing close", "colour: blue\n", "[colour] []"},
		{"nested", "review:\n  write_aproval: true\n", "[review.write_aproval] [review.write_approval]"},
		{"under an agent", "agents:\n  lyra:\n    token_sha: ab\n", "[agents.lyra.token_sha] []"},
		{"korean key", "메모리: 1\n", "[메모리] []"},
		{"does not parse", "memory_char_limit: [oops\n", "[] []"},
		{"empty", "", "[] []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, meant := UnknownConfigKeys([]byte(tc.yaml))
			if keys == nil {
				keys = []string{}
			}
			var ms []string
			for _, m := range meant {
				if m != "" {
					ms = append(ms, m)
				}
			}
			if ms == nil {
				ms = []string{}
			}
			if got := fmt.Sprint(keys, " ", ms); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
