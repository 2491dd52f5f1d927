package doctor

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/nexus-memory/nexus/vault"
)

// locks reports lock files under .nexus/state/locks/ that stay held for
// [Options.LockWait]. Nexus holds a lock for milliseconds, and the kernel
// drops a dead process's locks, so a lock held that long belongs to a live
// process that is stuck.
func (c *checker) locks(ctx context.Context) (string, []Finding, error) {
	dir := c.abs(vault.LocksDir)
	entries, err := vault.ReadDir(dir)
	if notExist(err) {
		return "no lock files", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	var held []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".lock") {
			path := filepath.Join(dir, e.Name())
			if isHeld(path) {
				held = append(held, path)
			}
		}
	}
	// Watch the held ones for LockWait: a lock released meanwhile was
	// ordinary work.
	deadline := time.NewTimer(c.opts.LockWait)
	defer deadline.Stop()
	tick := time.NewTicker(min(c.opts.LockWait/20+time.Millisecond, 100*time.Millisecond))
	defer tick.Stop()
	for len(held) > 0 {
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case <-deadline.C:
			var findings []Finding
			for _, p := range held {
				c.stuck[filepath.Base(p)] = true
				findings = append(findings, Finding{
					Path:    c.rel(p),
					Problem: fmt.Sprintf("lock held for over %s by a running process (Nexus holds locks for milliseconds), so writers that need it wait", c.opts.LockWait),
					Fix:     lockFix(p),
				})
			}
			return plural(len(entries), "lock file", "lock files"), findings, nil
		case <-tick.C:
			still := held[:0]
			for _, p := range held {
				if isHeld(p) {
					still = append(still, p)
				}
			}
			held = still
		}
	}
	return plural(len(entries), "lock file", "lock files") + ", none held for long", nil, nil
}

// isHeld reports whether another process (or another handle in this one)
// holds the lock at path. It takes the lock for an instant if it is free.
func isHeld(path string) bool {
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		fl.Unlock()
	}
	fl.Close()
	return !ok
}

// lockFix says how to find and stop the holder of a lock.
func lockFix(path string) string {
	if runtime.GOOS == "windows" {
		return "find the process holding " + path + " (Resource Monitor, CPU tab, Associated Handles) and stop it if it is hung; the lock is released when it exits"
	}
	return "find the holder with: fuser -v " + Quote(path) + " (or lsof " + Quote(path) + "), and stop it if it is hung (kill PID); the lock is released when it exits"
}

// tempFiles reports temp files (".NAME.tmp-*", as atomic writes name them)
// older than [Options.TempAge] anywhere in the vault except .obsidian/: an
// atomic write that crashed before its rename left them.
func (c *checker) tempFiles(ctx context.Context) (string, []Finding, error) {
	now := c.opts.Now()
	var findings []Finding
	scanned := 0
	err := filepath.WalkDir(c.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == c.root {
				return err
			}
			return nil // vanished or unreadable; not ours to judge
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".obsidian" || name == ".git" || name == ".trash" {
				return filepath.SkipDir
			}
			return nil
		}
		scanned++
		syncthing := isSyncthingTemp(name)
		if !IsTempName(name) && !syncthing {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if syncthing {
			if age := now.Sub(info.ModTime()); age >= c.opts.TempAge {
				findings = append(findings, Finding{
					Severity: SeverityNote,
					Path:     c.rel(path),
					Problem:  fmt.Sprintf("Syncthing's temp file of a transfer it did not finish, %s old: Syncthing resumes from it, and removes it itself after 24 hours (keepTemporariesH)", age.Round(time.Minute)),
					Fix:      removeCmd(path) + "  # when Syncthing is not running, or no longer syncs this folder; while it runs, it may still need it",
				})
			}
			return nil
		}
		if age := now.Sub(info.ModTime()); age >= c.opts.TempAge {
			findings = append(findings, Finding{
				Path:    c.rel(path),
				Problem: fmt.Sprintf("temp file left by an interrupted write, %s old; the real file beside it is intact", age.Round(time.Minute)),
				Fix:     removeCmd(path),
			})
		}
		return nil
	})
	if err != nil {
		return "", findings, err
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].Path < findings[j].Path })
	return plural(scanned, "file", "files") + " scanned for leftover temp files", findings, nil
}

// IsTempName reports whether a file name is an atomic write's temp file:
// ".NAME.tmp-RANDOM".
func IsTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// isSyncthingTemp reports whether a file name is Syncthing's temp file of
// a transfer in progress: ".syncthing.NAME.tmp" (Unix) or
// "~syncthing~NAME.tmp" (Windows).
func isSyncthingTemp(name string) bool {
	return strings.HasSuffix(name, ".tmp") && (strings.HasPrefix(name, ".syncthing.") || strings.HasPrefix(name, "~syncthing~"))
}

func removeCmd(path string) string {
	if runtime.GOOS == "windows" {
		return "del " + `"` + path + `"`
	}
	return "rm " + Quote(path)
}
