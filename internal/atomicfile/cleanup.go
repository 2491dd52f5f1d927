package atomicfile

import (
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// StaleAge is the age from which a temp file (".NAME.tmp-DIGITS") is the
// leftover of a writer that was killed between creating it and renaming
// it, rather than a write in progress. A write holds its temp file for the
// time it takes to write and fsync one file — milliseconds, seconds on a
// disk that is struggling — so ten minutes is far above any live write.
// A writer stopped for longer than that (SIGSTOP, a laptop asleep mid-write)
// finds its temp file gone and its rename fails: the write reports an
// error and the real file keeps its old bytes. nexus doctor reports temp
// files from the same age.
const StaleAge = 10 * time.Minute

// Sweeping limits. A folder is listed at most once per sweepEvery in one
// process, and only while it holds at most sweepMaxEntries entries: a
// folder bigger than that (a review/archive/ of years) would cost every
// write that lists it, so it is left alone and doctor reports what is left
// there. Listing 1,000 names costs about as much as one fsync
// (docs/benchmarks.md, BenchmarkSweepStale).
const (
	sweepEvery      = StaleAge / 2
	sweepMaxEntries = 1000
)

var (
	sweptMu sync.Mutex
	swept   = map[string]time.Time{} // folder -> when this process last swept it
	// sweepNow is the clock; tests move it.
	sweepNow = time.Now
)

// IsTempName reports whether name is a temp file of an atomic write, as
// [WriteFile] and the fact cache name them: a leading dot, the file's
// name, ".tmp-" and the random digits os.CreateTemp puts there. A person's
// own file rarely looks like that; only files of exactly this shape are
// ever removed.
func IsTempName(name string) bool {
	i := strings.LastIndex(name, ".tmp-")
	if !strings.HasPrefix(name, ".") || i < 1 {
		return false
	}
	digits := name[i+len(".tmp-"):]
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// SweepStale removes the temp files in dir older than [StaleAge]: what
// writers killed mid-write left behind. Writers call it before they write
// into dir. It lists dir at most once per five minutes in this process, and
// not at all when dir holds more than 1,000 entries. It is best effort:
// a file that cannot be removed stays, for doctor to report.
func SweepStale(dir string) { sweepStaleIn(osFolder(dir)) }

// sweepStaleIn is [SweepStale] of the folder d.
func sweepStaleIn(d folder) {
	now := sweepNow()
	key := filepath.Clean(d.path("."))
	sweptMu.Lock()
	last, seen := swept[key]
	if seen && now.Sub(last) < sweepEvery {
		sweptMu.Unlock()
		return
	}
	swept[key] = now
	sweptMu.Unlock()
	removeStale(d, now)
}

// RemoveStale removes the temp files in dir (not below it) whose
// modification time is [StaleAge] or more before now, and returns the
// names it removed. It reads no further than 1,000 entries: in a bigger
// folder it removes nothing and returns nil.
func RemoveStale(dir string, now time.Time) []string {
	return removeStale(osFolder(dir), now)
}

func removeStale(d folder, now time.Time) []string {
	f, err := d.open(".")
	if err != nil {
		return nil
	}
	var temps []string
	total := 0
	for {
		names, err := f.Readdirnames(256)
		total += len(names)
		if total > sweepMaxEntries {
			f.Close()
			return nil
		}
		for _, n := range names {
			if IsTempName(n) {
				temps = append(temps, n)
			}
		}
		if err == io.EOF || len(names) == 0 {
			break
		}
		if err != nil {
			f.Close()
			return nil
		}
	}
	f.Close()
	var removed []string
	for _, n := range temps {
		st, err := d.lstat(n)
		if err != nil || !st.Mode().IsRegular() || now.Sub(st.ModTime()) < StaleAge {
			continue
		}
		if d.remove(n) == nil {
			removed = append(removed, n)
		}
	}
	return removed
}

// ForgetSweeps makes this process list every folder again at its next
// write, as a new process would. For tests.
func ForgetSweeps() {
	sweptMu.Lock()
	clear(swept)
	sweptMu.Unlock()
}
