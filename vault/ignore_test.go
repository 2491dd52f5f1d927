package vault

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEnsureIgnoreRules(t *testing.T) {
	personGit := "# my own rules\n*.pdf\n!keep.pdf\n"
	tests := []struct {
		name      string
		gitBefore *string // nil: no file
		want      func(t *testing.T, got string)
	}{
		{"no file", nil, func(t *testing.T, got string) {
			if !strings.HasPrefix(got, "# >>> nexus") {
				t.Errorf("new .gitignore does not start with the block:\n%s", got)
			}
		}},
		{"a person's file", &personGit, func(t *testing.T, got string) {
			if !strings.HasPrefix(got, personGit+"\n# >>> nexus") {
				t.Errorf("the person's lines changed or the block is not appended after a blank line:\n%s", got)
			}
		}},
		{"no final newline", ptr("*.pdf"), func(t *testing.T, got string) {
			if !strings.HasPrefix(got, "*.pdf\n\n# >>> nexus") {
				t.Errorf("got:\n%s", got)
			}
		}},
		{"CRLF file", ptr("*.pdf\r\n"), func(t *testing.T, got string) {
			if strings.Count(got, "\n") != strings.Count(got, "\r\n") {
				t.Errorf("mixed line ends:\n%q", got)
			}
		}},
		{"an old block is replaced in place", ptr("a\n# >>> nexus: old words\n/.nexus/keys/\n# <<< nexus\nb\n"), func(t *testing.T, got string) {
			if !strings.HasPrefix(got, "a\n# >>> nexus: machine-local") || !strings.HasSuffix(got, "# <<< nexus\nb\n") || strings.Count(got, ">>> nexus") != 1 {
				t.Errorf("got:\n%s", got)
			}
		}},
		{"an orphaned begin line stays, lines after it too", ptr("# >>> nexus: broken\nmine\n"), func(t *testing.T, got string) {
			if !strings.HasPrefix(got, "# >>> nexus: broken\nmine\n\n# >>> nexus: machine-local") {
				t.Errorf("got:\n%s", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			gi := filepath.Join(root, GitIgnoreFile)
			if tt.gitBefore != nil {
				if err := os.WriteFile(gi, []byte(*tt.gitBefore), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			changed, err := EnsureIgnoreRules(root)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(changed, gi) || !slices.Contains(changed, filepath.Join(root, SyncthingIgnoreFile)) {
				t.Errorf("changed = %v, want both ignore files", changed)
			}
			got := readString(t, gi)
			tt.want(t, got)
			for _, r := range []string{"/.nexus/keys/", "/.nexus/state/", "/.nexus/index/", "/" + TimelineFile, ".*.tmp-*"} {
				if !strings.Contains(got, r+"\n") && !strings.Contains(got, r+"\r\n") {
					t.Errorf(".gitignore lacks %s:\n%s", r, got)
				}
			}
			st := readString(t, filepath.Join(root, SyncthingIgnoreFile))
			for _, r := range []string{"// >>> nexus", "/.nexus/keys\n", "/.nexus/state\n", "/.nexus/index\n", "// <<< nexus"} {
				if !strings.Contains(st, r) {
					t.Errorf(".stignore lacks %q:\n%s", r, st)
				}
			}
			// Idempotent: the second run touches nothing.
			old, _ := os.Stat(gi)
			time.Sleep(10 * time.Millisecond)
			again, err := EnsureIgnoreRules(root)
			if err != nil || len(again) != 0 {
				t.Errorf("second run changed %v, %v", again, err)
			}
			if st, _ := os.Stat(gi); !st.ModTime().Equal(old.ModTime()) {
				t.Error("second run rewrote .gitignore")
			}
			if readString(t, gi) != got {
				t.Error("second run changed .gitignore's bytes")
			}
			targets, err := CheckIgnoreRules(root)
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range targets {
				if len(tg.Missing) > 0 {
					t.Errorf("%s still misses %v", tg.Path, tg.Missing)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

func readString(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestCheckIgnoreRules(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A person excludes all of .nexus/ and the index, by hand.
	if err := os.WriteFile(filepath.Join(root, GitIgnoreFile), []byte(".nexus/**\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	targets, err := CheckIgnoreRules(root)
	if err != nil {
		t.Fatal(err)
	}
	git := targets[0]
	if !git.Active || git.Engine != "git" {
		t.Fatalf("git target %+v not active", git)
	}
	want := []string{"/" + TimelineFile, ".*.tmp-*"}
	if !slices.Equal(git.Missing, want) {
		t.Errorf("missing %v, want %v (a parent folder covers its contents)", git.Missing, want)
	}
	if targets[1].Active {
		t.Error("syncthing reported active without a .stfolder")
	}
}

func TestIgnoreRulesForASyncthingFolderAboveTheVault(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "notes", "vault")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(top, ".stfolder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(top, SyncthingIgnoreFile), []byte("// mine\n*.iso\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureIgnoreRules(root); err != nil {
		t.Fatal(err)
	}
	got := readString(t, filepath.Join(top, SyncthingIgnoreFile))
	if !strings.HasPrefix(got, "// mine\n*.iso\n\n// >>> nexus") || !strings.Contains(got, "\n/notes/vault/.nexus/keys\n") {
		t.Errorf("the folder's .stignore:\n%s", got)
	}
	targets, _ := CheckIgnoreRules(root)
	if len(targets) != 3 || !targets[2].Active || targets[2].Prefix != "notes/vault/" || len(targets[2].Missing) != 0 {
		t.Errorf("targets %+v", targets)
	}
}
