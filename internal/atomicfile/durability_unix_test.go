//go:build !windows

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSyncDirAfterRename: an error from the folder's fsync comes after
// the rename has landed. A file system that cannot fsync a folder is no
// error at all; any other error says the file is written (a
// [*DurabilityError], [Written]), never that nothing was.
func TestSyncDirAfterRename(t *testing.T) {
	writes := []struct {
		name  string
		old   *string // the file's bytes before; nil: absent
		write func(path string, old []byte) error
	}{
		{"WriteFile", ptr("old"), func(p string, _ []byte) error { return WriteFile(p, []byte("new"), 0o644) }},
		{"ReplaceIf create", nil, func(p string, _ []byte) error { return ReplaceIf(p, nil, []byte("new"), 0o644) }},
		{"ReplaceIf swap", ptr("old"), func(p string, old []byte) error { return ReplaceIf(p, old, []byte("new"), 0o644) }},
	}
	faults := []struct {
		name    string
		errno   syscall.Errno
		durable bool // nil error expected: the file system cannot fsync folders
	}{
		{"ENOTSUP", syscall.ENOTSUP, true},
		{"EOPNOTSUPP", syscall.EOPNOTSUPP, true},
		{"ENOSYS", syscall.ENOSYS, true},
		{"EINVAL", syscall.EINVAL, true},
		{"EIO", syscall.EIO, false},
	}
	for _, w := range writes {
		for _, f := range faults {
			t.Run(w.name+"/"+f.name, func(t *testing.T) {
				dir := t.TempDir()
				p := filepath.Join(dir, "n.md")
				var old []byte
				if w.old != nil {
					old = []byte(*w.old)
					if err := os.WriteFile(p, old, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				calls := 0
				injectFsyncDir(t, func(d *os.File) error {
					calls++
					return &fs.PathError{Op: "sync", Path: d.Name(), Err: f.errno}
				})

				err := w.write(p, old)
				if calls == 0 {
					t.Fatal("the folder was never fsynced")
				}
				if got, _ := os.ReadFile(p); string(got) != "new" {
					t.Fatalf("file = %q, want the new bytes (err %v)", got, err)
				}
				assertOnly(t, dir, "n.md")
				if !Written(err) {
					t.Fatalf("err = %v: reported as not written, yet the file holds the new bytes", err)
				}
				if f.durable {
					if err != nil {
						t.Fatalf("err = %v, want nil: the file system cannot fsync a folder", err)
					}
					return
				}
				var de *DurabilityError
				if !errors.As(err, &de) || de.Path != p || !errors.Is(err, f.errno) || errors.Is(err, ErrConflict) {
					t.Fatalf("err = %#v, want a *DurabilityError for %s wrapping %v", err, p, f.errno)
				}
			})
		}
	}
}

// TestSyncDirUnsupported: SyncDir itself passes over a file system that
// cannot fsync a folder and reports every other failure.
func TestSyncDirUnsupported(t *testing.T) {
	for _, tt := range []struct {
		errno   syscall.Errno
		wantErr bool
	}{
		{syscall.ENOTSUP, false},
		{syscall.EINVAL, false},
		{syscall.ENOSYS, false},
		{syscall.EIO, true},
		{syscall.ENOSPC, true},
	} {
		t.Run(tt.errno.Error(), func(t *testing.T) {
			injectFsyncDir(t, func(d *os.File) error { return &fs.PathError{Op: "sync", Path: d.Name(), Err: tt.errno} })
			err := SyncDir(t.TempDir())
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, tt.errno)) {
				t.Errorf("SyncDir = %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

// injectFsyncDir makes every folder fsync answer with fn until the test
// ends.
func injectFsyncDir(t *testing.T, fn func(*os.File) error) {
	fsyncDir = fn
	t.Cleanup(func() { fsyncDir = (*os.File).Sync })
}
