package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// saveInPlace writes text into path the way Obsidian saves: truncate
// through an open handle, then write (after delay, in the background when
// delay > 0).
func saveInPlace(t *testing.T, path, text string, delay time.Duration) <-chan struct{} {
	t.Helper()
	h, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	write := func() {
		defer close(done)
		time.Sleep(delay)
		h.WriteString(text)
		h.Close()
	}
	if delay > 0 {
		go write()
	} else {
		write()
	}
	return done
}

func withHooks(t *testing.T, before, after func(string)) {
	testHookBeforeRename, testHookAfterRename = before, after
	t.Cleanup(func() { testHookBeforeRename, testHookAfterRename = nil, nil })
}

// TestSaveInTheWindowIsPutBack: a person's in-place save lands after the
// comparison and before the rename. The rename would drop it; ReplaceIf
// sees it in the replaced file, puts it back and says ErrConflict, so the
// caller starts over from the person's bytes.
func TestSaveInTheWindowIsPutBack(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows cannot keep the compared file open across the rename (see ReplaceIf)")
	}
	for _, delay := range []time.Duration{0, 30 * time.Millisecond, 400 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "MEMORY.md")
			os.WriteFile(p, []byte("old"), 0o644)
			var done <-chan struct{}
			withHooks(t, func(string) { done = saveInPlace(t, p, "person's save", delay) }, nil)
			err := ReplaceIf(p, []byte("old"), []byte("agent's write"), 0o644)
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("err = %v, want ErrConflict", err)
			}
			<-done
			if got, _ := os.ReadFile(p); string(got) != "person's save" {
				t.Fatalf("file = %q, want the person's save", got)
			}
			withHooks(t, nil, nil)
			// The caller starts over from the person's bytes and succeeds.
			if err := ReplaceIf(p, []byte("person's save"), []byte("person's save + agent's write"), 0o644); err != nil {
				t.Fatal(err)
			}
			assertNoTemp(t, filepath.Dir(p))
		})
	}
}

// TestSaveInTheWindowKeptAsideWhenTheFileMovesOn: the file changes again
// before the displaced save can be put back; the save is kept as a
// conflict copy beside it, nothing is lost.
func TestSaveInTheWindowKeptAsideWhenTheFileMovesOn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows cannot keep the compared file open across the rename")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "MEMORY.md")
	os.WriteFile(p, []byte("old"), 0o644)
	withHooks(t, func(string) { saveInPlace(t, p, "person's save", 0) },
		func(string) { os.WriteFile(p+".new", []byte("another program"), 0o644); os.Rename(p+".new", p) })
	err := ReplaceIf(p, []byte("old"), []byte("agent's write"), 0o644)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "Nexus conflicted copy") {
		t.Fatalf("err = %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "MEMORY (Nexus conflicted copy *).md"))
	if len(matches) != 1 {
		t.Fatalf("conflict copies %v", matches)
	}
	if got, _ := os.ReadFile(matches[0]); string(got) != "person's save" {
		t.Fatalf("copy = %q", got)
	}
	if got, _ := os.ReadFile(p); string(got) != "another program" {
		t.Fatalf("file = %q", got)
	}
}

// TestNoSaveNoRestore: a compare-and-swap with nobody else writing leaves
// exactly the new bytes and no copies.
func TestNoSaveNoRestore(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.md")
	os.WriteFile(p, []byte("old"), 0o644)
	if err := ReplaceIf(p, []byte("old"), []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); string(got) != "new" {
		t.Fatalf("file = %q", got)
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Fatalf("folder holds %v", des)
	}
}

// TestCreateNeverReplaces: a create-only swap (old nil) whose file
// appears between the check and the rename fails instead of replacing it.
func TestCreateNeverReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "new.md")
	if err := ReplaceIf(p, nil, []byte("first"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceIf(p, nil, []byte("second"), 0o644); !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "first" {
		t.Fatalf("file = %q", got)
	}
	assertNoTemp(t, filepath.Dir(p))
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if IsTempName(de.Name()) {
			t.Errorf("temp file left: %s", de.Name())
		}
	}
}

// TestSaveDuringTheFsyncIsPutBackAtOnce: an editor that looked the name up
// just before the rename truncates and writes the replaced file while the
// folder's fsync runs — on a busy disk that takes tens or hundreds of
// milliseconds, and a person reading the file meanwhile sees the agent's
// version without their save. The save must be put back while the fsync
// is still running, not after it: the fsync here does not finish until
// the person's bytes are back in the file (or 10 s have passed).
func TestSaveDuringTheFsyncIsPutBackAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows cannot keep the compared file open across the rename")
	}
	p := filepath.Join(t.TempDir(), "MEMORY.md")
	os.WriteFile(p, []byte("old"), 0o644)
	var (
		editor        *os.File // opened before the first rename: the old file
		opened, first sync.Once
		putBackInTime bool
	)
	withHooks(t, func(string) {
		opened.Do(func() {
			var err error
			if editor, err = os.OpenFile(p, os.O_WRONLY, 0); err != nil {
				t.Error(err)
			}
		})
	}, nil)
	testHookSyncSwapped = func(string) {
		first.Do(func() { // not the put-back's own fsync
			editor.Truncate(0)
			editor.WriteAt([]byte("person's save"), 0)
			editor.Close()
			for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
				if got, _ := os.ReadFile(p); string(got) == "person's save" {
					putBackInTime = true
					return
				}
			}
		})
	}
	t.Cleanup(func() { testHookSyncSwapped = nil })
	err := ReplaceIf(p, []byte("old"), []byte("agent's write"), 0o644)
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	if !putBackInTime {
		t.Error("the save made during the fsync was put back only after the fsync finished")
	}
	if got, _ := os.ReadFile(p); string(got) != "person's save" {
		t.Fatalf("file = %q, want the person's save", got)
	}
	assertNoTemp(t, filepath.Dir(p))
}

// TestEditorStillOpeningIsWaitedFor: an editor looked the name up and
// opened the old file for writing just before the rename, but its
// truncate and write come long after the fsyncs (on a busy disk the
// truncate waits for the journal). While it holds the replaced file open
// for writing, ReplaceIf waits for it, then puts its save back.
func TestEditorStillOpeningIsWaitedFor(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux tells who holds a file open for writing (a read lease); elsewhere the window stays (docs/vault.md)")
	}
	p := filepath.Join(t.TempDir(), "MEMORY.md")
	os.WriteFile(p, []byte("old"), 0o644)
	done := make(chan struct{})
	var opened sync.Once
	withHooks(t, func(string) {
		opened.Do(func() {
			editor, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				close(done)
				return
			}
			go func() {
				defer close(done)
				time.Sleep(200 * time.Millisecond)
				editor.Truncate(0)
				editor.WriteAt([]byte("person's save"), 0)
				editor.Close()
			}()
		})
	}, nil)
	err := ReplaceIf(p, []byte("old"), []byte("agent's write"), 0o644)
	<-done
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict: the save landed in the replaced file after ReplaceIf had returned", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "person's save" {
		t.Fatalf("file = %q, want the person's save", got)
	}
	assertNoTemp(t, filepath.Dir(p))
}
