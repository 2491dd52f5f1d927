package livelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/atomicfile"
)

func TestSealState(t *testing.T) {
	for _, doc := range []string{`{}`, `{"a":1}`, `{"feeds":{"live":{"lyra@box":{"seq":3,"hash":"x"}}},"files":{}}`, `{"s":"로그 \"quoted\" }{"}`} {
		sealed := sealState([]byte(doc))
		if !json.Valid(bytes.TrimSpace(sealed)) || !bytes.HasPrefix(sealed, []byte(sealPrefix)) || !bytes.HasSuffix(sealed, []byte("\n")) {
			t.Fatalf("sealed %s: %q", doc, sealed)
		}
		got, ok := unsealState(sealed)
		if !ok || string(got) != doc {
			t.Fatalf("unseal(seal(%s)) = %q %v", doc, got, ok)
		}
		// Padding (left by a longer earlier version) reads the same.
		if got, ok := unsealState(append(sealed, "      \n"...)); !ok || string(got) != doc {
			t.Fatalf("padded: %q %v", got, ok)
		}
	}
	sealed := sealState([]byte(`{"seq":12,"hash":"abcdef"}`))
	for name, bad := range map[string][]byte{
		"one byte changed": bytes.Replace(sealed, []byte("12"), []byte("13"), 1),
		"cut short":        sealed[:len(sealed)-8],
		"bad sum":          append([]byte(`{"sum":"zz`), sealed[10:]...),
		"no sum end":       []byte(`{"sum":"0123`),
		"mixed with older": append(append([]byte{}, sealed[:30]...), sealState([]byte(`{"seq":11,"hash":"abcdef"}`))[30:]...),
	} {
		if _, ok := unsealState(bad); ok {
			t.Errorf("%s: %q taken as whole", name, bad)
		}
	}
	// A file written by an older version (no sum) reads as it is.
	if got, ok := unsealState([]byte("{\"seq\":4}\n  \x00")); !ok || string(got) != `{"seq":4}` {
		t.Fatalf("unsealed legacy: %q %v", got, ok)
	}
}

func FuzzUnsealState(f *testing.F) {
	f.Add([]byte(`{"a":1}`))
	f.Add(sealState([]byte(`{"a":1}`)))
	f.Add([]byte(sealPrefix + "00000000000000000000000000000000\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, ok := unsealState(data)
		if ok && bytes.HasPrefix(bytes.TrimRight(data, " \n\x00"), []byte(sealPrefix)) {
			// A sealed document that checks out seals back to itself.
			if again, ok2 := unsealState(sealState(doc)); !ok2 || !bytes.Equal(again, doc) {
				t.Fatalf("round trip of %q: %q", doc, again)
			}
		}
		if json.Valid(data) && len(data) > 1 && data[0] == '{' {
			if got, ok := unsealState(sealState(data)); !ok || !bytes.Equal(got, bytes.TrimRight(data, " \n\x00")) {
				t.Fatalf("seal/unseal of %q: %q %v", data, got, ok)
			}
		}
	})
}

// TestWriteStateSwaps: a state file is replaced whole, again and again,
// shorter and longer, with readers reading all the while: every read is
// one version, never a mix; a half-written file falls back to its
// previous version.
func TestWriteStateSwaps(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	rel := StateDir + "/test/state.json"
	type doc struct {
		A, B int
		Pad  string
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad []string
	var mu sync.Mutex
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var d doc
				err := readJSON(l.abs(rel), &d)
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				if err != nil || d.A != d.B || len(d.Pad) != d.A%97 {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%+v %v", d, err))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range 2000 {
		if err := l.writeState(rel, doc{A: i, B: i, Pad: strings.Repeat("x", i%97)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d reads saw a mix, e.g. %s", len(bad), bad[0])
	}
	var d doc
	if err := readJSON(l.abs(rel), &d); err != nil || d.A != 1999 {
		t.Fatalf("last: %+v %v", d, err)
	}
	// A crash while writing in place: the file half written. Its
	// previous version (the swap partner) is read instead.
	path := l.abs(rel)
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	d = doc{}
	err := readJSON(path, &d)
	if _, statErr := os.Stat(nextStatePath(path)); statErr == nil {
		if err != nil || d.A != 1998 || d.B != 1998 {
			t.Fatalf("half-written file: %+v %v, want the previous version", d, err)
		}
	} else if !errors.Is(err, errTornState) {
		t.Fatalf("half-written file, no partner: %+v %v", d, err)
	}
	// Both halves gone bad: an error, not a wrong value.
	os.WriteFile(nextStatePath(path), data[:len(data)/3], 0o644)
	if err := readJSON(path, &d); !errors.Is(err, errTornState) {
		t.Fatalf("both torn: %v", err)
	}
	// Written again, it is whole.
	if err := l.writeState(rel, doc{A: 5, B: 5, Pad: "xxxxx"}); err != nil {
		t.Fatal(err)
	}
	if err := readJSON(path, &d); err != nil || d.A != 5 {
		t.Fatalf("rewritten: %+v %v", d, err)
	}
}

// TestWitnessNotWrittenWhenNothingNew: a verify with nothing new neither
// locks nor writes the witness — and a cut made afterwards is still named.
func TestWitnessNotWrittenWhenNothingNew(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 4 {
		mustAppend(t, l, "lyra", fmt.Sprint("e", i+1))
		mustAppend(t, l, "ella", fmt.Sprint("f", i+1))
	}
	if r := mustVerify(t, l); !r.OK(true) {
		t.Fatalf("verify: %v %+v", r.Counts, r.Findings)
	}
	wpath := l.abs(witnessFile)
	before, _ := os.ReadFile(wpath)
	st0, _ := os.Stat(wpath)
	// Another process holds the witness lock: a verify that needed it
	// would wait for it (and time out); one with nothing new does not.
	unlock, err := v.Lock(witnessLock)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *Report, 1)
	go func() { done <- mustVerify(t, l) }()
	select {
	case r := <-done:
		if !r.OK(true) {
			t.Fatalf("second verify: %v %+v", r.Counts, r.Findings)
		}
	case <-time.After(10 * time.Second):
		unlock()
		t.Fatal("a verify with nothing new waited for the witness lock")
	}
	unlock()
	after, _ := os.ReadFile(wpath)
	st1, _ := os.Stat(wpath)
	if !bytes.Equal(before, after) || !os.SameFile(st0, st1) {
		t.Fatal("the witness was rewritten with nothing new")
	}
	// Cut lyra's last two entries: named, now and after more appends.
	path := feedFile(l, "lyra")
	data, _ := os.ReadFile(path)
	es := ParseFeed("x", data)
	os.WriteFile(path, data[:es[2].Offset], 0o644)
	if r := mustVerify(t, l); r.OK(false) || !hasFinding(r, StatusRemoved, "entries 3-4 of lyra@box were cut off") {
		t.Fatalf("cut: %v %+v", r.Counts, r.Findings)
	}
	mustAppend(t, l, "ella", "f5")
	res, err := l.AppendDetailed("lyra", Entry{Summary: "after the cut"})
	if err != nil || res.Entry.Seq != 5 || res.Gap != "3-4" {
		t.Fatalf("append after the cut: %+v %v", res, err)
	}
	if r := mustVerify(t, l); r.OK(false) || !hasFinding(r, StatusRemoved, "lyra@box") {
		t.Fatalf("after appends: %v %+v", r.Counts, r.Findings)
	}
}

// TestKilledBeforeWitness: a process that died after writing its entry
// but before recording it in the witness (and its hint) leaves the
// witness behind, not wrong: the next append or verify finds the entry,
// numbers after it, and a cut made after that is named.
func TestKilledBeforeWitness(t *testing.T) {
	for _, next := range []string{"append", "verify"} {
		t.Run(next, func(t *testing.T) {
			v := mustVault(t)
			l := mustLog(t, v)
			for i := range 3 {
				mustAppend(t, l, "lyra", fmt.Sprint("e", i+1))
			}
			mustAppend(t, l, "ella", "f1")
			wpath, hpath := l.abs(witnessFile), l.abs(hintPath(streamLive, "lyra@"+testDevice))
			w0, _ := os.ReadFile(wpath)
			h0, _ := os.ReadFile(hpath)
			mustAppend(t, l, "lyra", "e4 (acknowledged, then the process died)")
			// The state as the dead process left it: entry written, hint
			// and witness from before it. A fresh process (Log) goes on.
			os.WriteFile(wpath, w0, 0o644)
			os.WriteFile(hpath, h0, 0o644)
			l = mustLog(t, v)
			if next == "append" {
				e := mustAppend(t, l, "lyra", "e5")
				if e.Seq != 5 {
					t.Fatalf("numbered %d after a death before the witness, want 5", e.Seq)
				}
			} else if r := mustVerify(t, l); !r.OK(true) || r.Counts[StatusIntact] != 5 {
				t.Fatalf("verify: %v %+v", r.Counts, r.Findings)
			}
			// Now cut lyra's tail back to e3: what was seen is named.
			path := feedFile(l, "lyra")
			data, _ := os.ReadFile(path)
			es := ParseFeed("x", data)
			os.WriteFile(path, data[:es[3].Offset], 0o644)
			r := mustVerify(t, l)
			if r.OK(false) || !hasFinding(r, StatusRemoved, "of lyra@box") || !hasFinding(r, StatusRemoved, "cut off the end of its feed") {
				t.Fatalf("cut after a death before the witness: %v %+v", r.Counts, r.Findings)
			}
		})
	}
}

// TestKeyringCache: the keys used to check heads follow IDENTITY.md: an
// agent added after the first load is known, a file left alone is not
// parsed again.
func TestKeyringCache(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	kr1, err := l.keyring()
	if err != nil || len(kr1) != 3 {
		t.Fatalf("keyring: %v %v", kr1, err)
	}
	kr2, _ := l.keyring()
	if fmt.Sprintf("%p", kr1) != fmt.Sprintf("%p", kr2) {
		t.Fatal("keyring loaded again with no IDENTITY.md changed")
	}
	if _, err := identity.Create(v, "nova", "new agent", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("nova", Entry{Summary: "signs a key into IDENTITY.md"}); err != nil {
		t.Fatal(err)
	}
	kr3, err := l.keyring()
	if err != nil || len(kr3["nova"]) == 0 {
		t.Fatalf("new agent's key not loaded: %v %v", kr3, err)
	}
	// An IDENTITY.md rewritten with its keys removed: they are gone.
	p := filepath.Join(v.Root(), filepath.FromSlash(identity.IdentityPath("nova")))
	os.WriteFile(p, []byte("---\nrole: new agent\n---\nno keys\n"), 0o644)
	kr4, _ := l.keyring()
	if len(kr4["nova"]) != 0 {
		t.Fatalf("removed key still used: %v", kr4["nova"])
	}
}

// hasFinding reports whether r has a finding of status whose detail
// contains detail.
func hasFinding(r *Report, status Status, detail string) bool {
	for _, f := range r.Findings {
		if f.Status == status && strings.Contains(f.Detail, detail) {
			return true
		}
	}
	return false
}

// TestDeviceRenamedWhileOpen: a device name changed by another process
// ('nexus device name') is used by the next append of a Log opened
// before, even a name of the same length.
func TestDeviceRenamedWhileOpen(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	if e := mustAppend(t, l, "lyra", "on box"); e.Writer != "lyra@box" {
		t.Fatalf("writer %s", e.Writer)
	}
	for _, name := range []string{"vps", "laptop"} {
		if err := v.SetDevice(name); err != nil {
			t.Fatal(err)
		}
		if e := mustAppend(t, l, "lyra", "on "+name); e.Writer != "lyra@"+name {
			t.Fatalf("after renaming the device to %s: writer %s", name, e.Writer)
		}
	}
}

// TestGapFromHint: the last append made here (the feed's hint) is
// evidence too: with the witness lost and the feed's tail cut, the next
// append still numbers after what this machine appended.
func TestGapFromHint(t *testing.T) {
	v := mustVault(t)
	l := mustLog(t, v)
	for i := range 4 {
		mustAppend(t, l, "lyra", fmt.Sprint("e", i+1))
	}
	mustAppend(t, l, "ella", "f1")
	os.Remove(l.abs(witnessFile))
	os.Remove(nextStatePath(l.abs(witnessFile)))
	path := feedFile(l, "lyra")
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:ParseFeed("x", data)[2].Offset], 0o644) // cut e3, e4
	res, err := l.AppendDetailed("lyra", Entry{Summary: "after the cut"})
	if err != nil || res.Entry.Seq != 5 || res.Gap != "3-4" {
		t.Fatalf("append after a cut, witness lost: %+v %v", res, err)
	}
}

// TestRenameStateLeavesNothingAndSweeps: the portable state write leaves
// no temp file, names its temp file as every atomic write does, and
// sweeps what a killed writer left in the folder.
func TestRenameStateLeavesNothingAndSweeps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "witness.json")
	stale := filepath.Join(dir, ".witness.json.tmp-123456")
	if err := os.WriteFile(stale, []byte("{half"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * atomicfile.StaleAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	atomicfile.ForgetSweeps()
	for _, text := range []string{"one\n", "two\n"} {
		if err := renameState(path, []byte(text)); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != text {
			t.Fatalf("state %q, want %q", got, text)
		}
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0].Name() != "witness.json" {
		t.Fatalf("folder holds %v, want only witness.json", names)
	}
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
}
