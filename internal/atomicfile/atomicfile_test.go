package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.md")
	for _, content := range []string{"one", "two — 둘", ""} {
		if err := WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != content {
			t.Fatalf("got %q want %q", got, content)
		}
	}
	assertOnly(t, dir, "a.md")
}

func TestReplaceIf(t *testing.T) {
	tests := []struct {
		name    string
		initial *string // nil: file absent
		old     []byte
		wantErr error
		want    string
	}{
		{"create when absent", nil, nil, nil, "new"},
		{"create refused when present", ptr("person"), nil, ErrConflict, "person"},
		{"swap when unchanged", ptr("mine"), []byte("mine"), nil, "new"},
		{"refused when a person saved", ptr("person's save"), []byte("mine"), ErrConflict, "person's save"},
		{"refused when deleted", nil, []byte("mine"), ErrConflict, ""},
		{"empty file is not absent", ptr(""), nil, ErrConflict, ""},
		{"empty file matches empty old", ptr(""), []byte{}, nil, "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "n.md")
			if tt.initial != nil {
				os.WriteFile(p, []byte(*tt.initial), 0o644)
			}
			err := ReplaceIf(p, tt.old, []byte("new"), 0o644)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			got, _ := os.ReadFile(p)
			if string(got) != tt.want {
				t.Fatalf("file = %q, want %q", got, tt.want)
			}
			if tt.initial == nil && tt.wantErr != nil {
				assertOnly(t, dir)
			} else {
				assertOnly(t, dir, "n.md")
			}
		})
	}
}

func TestWriteFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.md")
	os.WriteFile(p, []byte("old"), 0o644)
	createTemp = func(dir, pattern string) (*os.File, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err == nil {
			f.Close() // writes now fail
		}
		return f, err
	}
	defer func() { createTemp = os.CreateTemp }()
	if err := WriteFile(p, []byte("new"), 0o644); err == nil || Written(err) {
		t.Fatalf("write to a closed temp file: err = %v, want one that says nothing was written", err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Fatalf("file = %q after failed write", got)
	}
	assertOnly(t, dir, "a.md")
}

func TestTempFilesAreHidden(t *testing.T) {
	dir := t.TempDir()
	var seen string
	createTemp = func(d, pattern string) (*os.File, error) {
		f, err := os.CreateTemp(d, pattern)
		if f != nil {
			seen = filepath.Base(f.Name())
		}
		return f, err
	}
	defer func() { createTemp = os.CreateTemp }()
	WriteFile(filepath.Join(dir, "Note.md"), []byte("x"), 0o644)
	if !strings.HasPrefix(seen, ".Note.md.tmp-") {
		t.Fatalf("temp file %q is not a dot-file", seen)
	}
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("folder holds %v, want %v", got, names)
	}
}

func ptr(s string) *string { return &s }
