package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestInitSaysWhichIgnoreFilesNoToolReads: init writes .gitignore and
// .stignore, says which of them no sync tool around the vault reads yet,
// and with --no-ignore-files writes neither.
func TestInitSaysWhichIgnoreFilesNoToolReads(t *testing.T) {
	t.Setenv("NEXUS_VAULT", "")
	for _, tc := range []struct {
		name       string
		marker     string // made in the folder above the vault first
		flags      []string
		written    []string
		unused     []string
		textUnused string // in the text output; "" for no such line
	}{
		{"no sync tool", "", nil, []string{".gitignore", ".stignore"}, []string{".gitignore", ".stignore"}, "(no git repository or Syncthing folder around the vault reads .gitignore or .stignore yet"},
		{"in a git repository", ".git", nil, []string{".gitignore", ".stignore"}, []string{".stignore"}, "(no Syncthing folder around the vault reads .stignore yet"},
		{"no ignore files", "", []string{"--no-ignore-files"}, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, withJSON := range []bool{false, true} {
				top := t.TempDir()
				if tc.marker != "" {
					if err := os.Mkdir(filepath.Join(top, tc.marker), 0o755); err != nil {
						t.Fatal(err)
					}
				}
				dir := filepath.Join(top, "vault")
				args := append([]string{"init", dir}, tc.flags...)
				if withJSON {
					args = append([]string{"--json"}, args...)
				}
				code, out, errs := logCLI(t, "", args...)
				if code != 0 {
					t.Fatalf("init: exit %d: %s", code, errs)
				}
				var got []string
				for _, f := range []string{".gitignore", ".stignore"} {
					if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
						got = append(got, f)
					}
				}
				if !slices.Equal(got, tc.written) {
					t.Errorf("files written %v, want %v", got, tc.written)
				}
				if withJSON {
					var res struct {
						IgnoreRules  []string `json:"ignore_rules"`
						IgnoreUnused []string `json:"ignore_rules_unused"`
					}
					if err := json.Unmarshal([]byte(out), &res); err != nil || !slices.Equal(res.IgnoreRules, nonNil(tc.written)) || !slices.Equal(res.IgnoreUnused, nonNil(tc.unused)) {
						t.Errorf("--json: %v\n%s", err, out)
					}
					continue
				}
				if tc.textUnused == "" && strings.Contains(out, "--no-ignore-files") || !strings.Contains(out, tc.textUnused) {
					t.Errorf("output does not say %q:\n%s", tc.textUnused, out)
				}
			}
		})
	}
}
