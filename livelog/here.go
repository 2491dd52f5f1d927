package livelog

import (
	"context"
	"crypto/ed25519"
	"errors"
	"io/fs"
	"sort"
	"strings"

	"github.com/nexus-memory/nexus/identity"
)

// recentHere is how many of a feed's newest entries [Log.FeedsHere]
// returns, for telling apart the keys that signed them.
const recentHere = 64

// maxNotHere bounds [FeedHere.NotHere]; NotHereCount has the full count.
const maxNotHere = 100

// FeedHere is one writer's live feed as this machine sees it: what a
// health check needs to tell a synced key or a device name used on two
// machines (doctor).
type FeedHere struct {
	Writer string `json:"writer"`
	// Recent are the feed's newest signed entries (up to 64), oldest
	// first; their signatures are not checked. The last one is the head.
	Recent []Entry `json:"recent"`
	// AppendedHere is true when this machine appended to the feed (it
	// keeps a record of its own last append in .nexus/state, which never
	// travels); LastHere is the number of that last append.
	AppendedHere bool  `json:"appended_here"`
	LastHere     int64 `json:"last_here,omitempty"`
	// NotHere are the feed's entries numbered above LastHere (oldest
	// first, at most 100; NotHereCount counts them all): appended by
	// another machine that uses this writer's device name. Empty when
	// AppendedHere is false.
	NotHere      []Entry `json:"not_here,omitempty"`
	NotHereCount int     `json:"not_here_count,omitempty"`
}

// Head returns the feed's newest signed entry, or nil.
func (f *FeedHere) Head() *Entry {
	if len(f.Recent) == 0 {
		return nil
	}
	return &f.Recent[len(f.Recent)-1]
}

// FeedsHere describes every writer's feed of the live log, by writer. It
// parses each writer's files from the newest month back, only as far as it
// needs: to its 64 newest entries, and past this machine's last append.
func (l *Log) FeedsHere(ctx context.Context) ([]FeedHere, error) {
	files, err := l.liveFiles()
	if err != nil {
		return nil, err
	}
	byWriter := map[string][]string{}
	for _, lf := range files {
		if !lf.legacy && lf.writer != "" {
			byWriter[lf.writer] = append(byWriter[lf.writer], lf.rel)
		}
	}
	writers := make([]string, 0, len(byWriter))
	for w := range byWriter {
		writers = append(writers, w)
	}
	sort.Strings(writers)
	out := make([]FeedHere, 0, len(writers))
	for _, w := range writers {
		fh, err := l.feedHere(ctx, w, byWriter[w])
		if err != nil {
			return nil, err
		}
		out = append(out, fh)
	}
	return out, nil
}

// feedHere describes writer w's feed, whose files are rels in month
// order, parsing them from the newest back only as far as it needs.
func (l *Log) feedHere(ctx context.Context, w string, rels []string) (FeedHere, error) {
	fh := FeedHere{Writer: w}
	var h feedHint
	if err := readHint(l.abs(hintPath(streamLive, w)), &h); err == nil && h.Seq > 0 {
		fh.AppendedHere, fh.LastHere = true, h.Seq
	}
	seenHash := map[uint64]bool{}
	var recent, notHere []Entry
	for i := len(rels) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return fh, err
		}
		ring, above, reachedHere, err := l.fileHere(ctx, rels[i], &fh, seenHash)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fh, err
		}
		// This file's entries come before those of the later months.
		recent = append(keepNewest(ring, recentHere-len(recent)), recent...)
		notHere = append(above, notHere...)
		if len(notHere) > maxNotHere {
			notHere = notHere[:maxNotHere]
		}
		if len(recent) >= recentHere && (!fh.AppendedHere || reachedHere) {
			break
		}
	}
	sort.SliceStable(recent, func(i, j int) bool { return recent[i].Seq < recent[j].Seq })
	fh.Recent, fh.NotHere = recent, notHere
	if fh.Recent == nil {
		fh.Recent = []Entry{}
	}
	l.ownUnhinted(&fh, h.Hash)
	return fh, nil
}

// fileHere reads one file of fh's feed: its newest entries (ring, oldest
// first), those above this machine's last append (counted in fh), and
// whether it reaches down to that append. Entries already seen in a later
// file (seenHash) are skipped.
func (l *Log) fileHere(ctx context.Context, rel string, fh *FeedHere, seenHash map[uint64]bool) (ring, above []Entry, reachedHere bool, err error) {
	it, err := l.openIter(rel, streamLive, 0, false)
	if err != nil {
		return nil, nil, false, err
	}
	defer it.close()
	ringAt := 0 // the oldest entry once the ring is full
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, false, err
			}
		}
		e, ok, err := it.next()
		if err != nil {
			return nil, nil, false, err
		}
		if !ok {
			break
		}
		if !e.Signed || !e.feed || e.Torn || e.Writer != fh.Writer || seenHash[prefix8(e.Hash)] {
			continue
		}
		seenHash[prefix8(e.Hash)] = true
		if len(ring) < recentHere {
			ring = append(ring, e)
		} else {
			ring[ringAt] = e
			ringAt = (ringAt + 1) % recentHere
		}
		reachedHere = reachedHere || e.Seq <= fh.LastHere
		if fh.AppendedHere && e.Seq > fh.LastHere {
			fh.NotHereCount++
			if len(above) < maxNotHere {
				above = append(above, e)
			}
		}
	}
	ring = append(append([]Entry(nil), ring[ringAt:]...), ring[:ringAt]...)
	return ring, above, reachedHere, nil
}

// ownUnhinted moves into LastHere the entries above it that this machine
// wrote but whose hint it did not record: an append killed between the
// write of its records and the update of the hint (the next append here
// mends the hint). They follow the hint's entry in the chain (hash is its
// chain hash) and carry this machine's signature for the agent; a vault
// folder copied to another machine cannot append under this name
// ([vault.Vault.CheckMachine]), so no other machine signs with that key.
func (l *Log) ownUnhinted(fh *FeedHere, hash string) {
	if !fh.AppendedHere || fh.NotHereCount == 0 || len(fh.NotHere) == 0 {
		return
	}
	s, err := identity.LoadSigner(l.v, WriterAgent(fh.Writer))
	if err != nil {
		return
	}
	n := 0
	for _, e := range fh.NotHere {
		msg, sig, ok := EntrySignature(&e)
		if !ok || e.Seq != fh.LastHere+1 || e.Prev != hash || !ed25519.Verify(s.PublicKey(), msg, sig) {
			break
		}
		fh.LastHere, hash = e.Seq, e.Hash
		n++
	}
	if n == len(fh.NotHere) && fh.NotHereCount > n {
		return // more than were kept: leave it to the next append to mend
	}
	fh.NotHere = fh.NotHere[n:]
	fh.NotHereCount -= n
	if len(fh.NotHere) == 0 {
		fh.NotHere = nil
	}
}

// keepNewest returns the last n of es (all if fewer), with bodies kept.
func keepNewest(es []Entry, n int) []Entry {
	if n <= 0 {
		return nil
	}
	if len(es) > n {
		es = es[len(es)-n:]
	}
	return append([]Entry(nil), es...)
}

// WriterDevice returns the device part of a writer ("vps" of "lyra@vps").
func WriterDevice(w string) string { _, d, _ := strings.Cut(w, "@"); return d }

// EntrySignature returns the entry's signature bytes and the bytes it
// covers ([Entry.Canonical]), for checking which key made it. ok is false
// for an unsigned entry or a malformed signature.
func EntrySignature(e *Entry) (msg, sig []byte, ok bool) {
	if !e.Signed {
		return nil, nil, false
	}
	sig, err := b64.DecodeString(e.Sig)
	if err != nil || len(sig) != 64 {
		return nil, nil, false
	}
	return e.Canonical(), sig, true
}
