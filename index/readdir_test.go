package index

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// TestReadNotesDir checks the fast folder listing against the portable
// one: the same notes, sizes, mtimes and folders.
func TestReadNotesDir(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"a.md": "one", "B.MD": "three", "배포.md": "korean", ".hidden.md": "x", "notes.txt": "x", "x.md.bak": "x", ".md": "x",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"sub", ".obsidian", "폴더"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(filepath.Join(dir, "a.md"), filepath.Join(dir, "link.md")) // not followed, where symlinks exist
	got, gotDirs, err := readNotesDir(dir, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, wantDirs, err := readNotesDirPortable(dir, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].name < got[j].name })
	sort.Strings(gotDirs)
	if len(got) != 3 || len(gotDirs) != 2 {
		t.Fatalf("notes %v, folders %v", got, gotDirs)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("note %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for i := range wantDirs {
		if gotDirs[i] != wantDirs[i] {
			t.Errorf("folders %v, want %v", gotDirs, wantDirs)
		}
	}
	if _, _, err := readNotesDir(filepath.Join(dir, "missing"), "", nil, nil); err == nil {
		t.Error("a missing folder gave no error")
	}
}
