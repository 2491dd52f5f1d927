package livelog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// Vault-relative locations of the log's own state.
const (
	StateDir = vault.StateDir + "/livelog"
	headFile = StateDir + "/head.json"
	// decisionsHeadFile names the last decision recorded, so that verify
	// can tell when decisions were cut off the end of log/decisions.md.
	decisionsHeadFile = StateDir + "/decisions-head.json"
	cursorsDir        = StateDir + "/cursors"
	lockName          = "livelog"
)

// Options configure a [Log]. The zero value is usable.
type Options struct {
	// Now is the clock entries are stamped with (default time.Now).
	Now func() time.Time
	// Logger receives warnings such as a torn tail found and stepped over
	// (default: discard).
	Logger *slog.Logger
	// PollInterval is how often [Log.Follow] looks for new entries
	// (default 250ms).
	PollInterval time.Duration
}

// Log is the live-context log of a vault (and its decision log). It is safe
// for concurrent use by many goroutines; many processes may open the same
// vault's log at once.
type Log struct {
	v    *vault.Vault
	root string // v.Root()
	opts Options

	mu      sync.Mutex                  // protects signers
	signers map[string]*identity.Signer // loaded private keys, by writer

	witMu  sync.Mutex // protects witDoc, wit
	witDoc []byte     // the witness's text as this process last read or wrote it
	wit    witness    // witDoc decoded (callers get clones)

	devMu    sync.Mutex // protects dev, devStamp
	dev      string     // the device name as last read (see device)
	devStamp idStamp

	krMu     sync.Mutex       // protects kr, krStamps, rots
	kr       identity.Keyring // the keys as last loaded (see keyring)
	krStamps []idStamp
	rots     map[string][]identity.Rotation // the key rotations, loaded with kr

	dirMu sync.Mutex            // protects dirs
	dirs  map[string]dirListing // folder listings (see readDir)

	countMu sync.Mutex                       // protects counts
	counts  map[string]map[string]*fileCount // UnreadCount's running counts, by agent and file
	// countBusy (under countMu) runs one count per agent at a time: a
	// second waits and finds the first's counts (a hub counts in the
	// background while a log_read wants the same count).
	countBusy map[string]*sync.Mutex
}

// Open returns the live log of v. It creates nothing until the first
// append.
func Open(v *vault.Vault, opts Options) (*Log, error) {
	if v == nil {
		return nil, errors.New("livelog: nil vault")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	// The log's folders must not lead out of the vault (a symlink).
	for _, d := range []string{vault.LiveLogDir, StateDir, vault.DecisionsLog} {
		if _, err := v.Path(d); err != nil {
			return nil, fmt.Errorf("open live log: %w", err)
		}
	}
	return &Log{v: v, root: v.Root(), opts: opts, signers: map[string]*identity.Signer{}, counts: map[string]map[string]*fileCount{}}, nil
}

// Vault returns the vault the log belongs to.
func (l *Log) Vault() *vault.Vault { return l.v }

// signer returns the key agent signs with on this machine as writer,
// creating it and listing it in IDENTITY.md on first use.
func (l *Log) signer(agent, writer string) (*identity.Signer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.signers[writer]; ok {
		return s, nil
	}
	_, device, _ := strings.Cut(writer, "@")
	s, err := identity.SignerFor(l.v, agent, device)
	if err != nil {
		return nil, err
	}
	l.signers[writer] = s
	return s, nil
}

// SegmentName returns the vault-relative segment of t's month in an
// older vault's single shared chain: log/live/YYYY-MM.md. Such segments
// are still read and verified; new entries go to feeds ([FeedPath]).
func SegmentName(t time.Time) string {
	return vault.LiveLogDir + "/" + t.UTC().Format("2006-01") + ".md"
}

// isSegment reports whether rel names a segment (log/live/YYYY-MM.md). Paths
// read from state files and given by callers are checked with it before use.
func isSegment(rel string) bool {
	name, ok := strings.CutPrefix(rel, vault.LiveLogDir+"/")
	if !ok || len(name) != len("2006-01.md") || !strings.HasSuffix(name, ".md") {
		return false
	}
	_, err := time.Parse("2006-01", strings.TrimSuffix(name, ".md"))
	return err == nil
}

// segments lists the existing segments, oldest first.
func (l *Log) segments() ([]string, error) {
	des, err := vault.ReadDir(l.abs(vault.LiveLogDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list log segments: %w", err)
	}
	var segs []string
	for _, de := range des {
		if rel := vault.LiveLogDir + "/" + de.Name(); de.Type().IsRegular() && isSegment(rel) {
			segs = append(segs, rel)
		}
	}
	sort.Strings(segs)
	return segs, nil
}

// pos is a position in the chain: the end of a block in a segment, and the
// chain hash of the last signed entry at or before it.
type pos struct {
	Segment string `json:"segment"`
	Offset  int64  `json:"offset"`
	Head    string `json:"head"`
	// Anchor is the hex SHA-256 of the (up to) 64 bytes before Offset: a
	// cheap check that the file was not changed before the position.
	Anchor string `json:"anchor"`
}

const anchorLen = 64

// anchorAt hashes the bytes before off in f.
func anchorAt(f *os.File, off int64) (string, error) {
	n := min(off, anchorLen)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off-n); err != nil {
		return "", err
	}
	return anchorOf(buf), nil
}

// anchorOfFile is [anchorAt] on the file at path ("" if it cannot be read).
func anchorOfFile(path string, off int64) string {
	f, err := vault.OpenRead(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	a, _ := anchorAt(f, off)
	return a
}

func anchorOf(b []byte) string {
	h := hashSig(b)
	return fmt.Sprintf("%x", h[:16])
}

// valid reports whether p still describes the file: it exists, is at
// least p.Offset long, and has the same bytes just before p.Offset.
func (l *Log) valid(p pos) bool {
	_, ok := l.validSize(p)
	return ok
}

// validSize is [Log.valid] that also returns the segment's size.
func (l *Log) validSize(p pos) (int64, bool) {
	if !isLogFile(p.Segment) || p.Offset < 0 {
		return 0, false
	}
	f, err := vault.OpenRead(l.abs(p.Segment))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < p.Offset {
		return 0, false
	}
	a, err := anchorAt(f, p.Offset)
	return st.Size(), err == nil && a == p.Anchor
}

func jsonIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	return append(data, '\n'), nil
}

// abs turns one of the log's own vault-relative paths (a segment checked
// with isSegment, the decision log, a state file of a valid agent) into an
// absolute path. Unlike [vault.Vault.MustPath] it does not resolve symlinks
// on every call: Open checked the log's folders once, and appends call this
// several times while holding the lock.
func (l *Log) abs(rel string) string {
	return filepath.Join(l.root, filepath.FromSlash(rel))
}
