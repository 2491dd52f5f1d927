package retention

import (
	"fmt"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// Kinds of pending item the curator files (package curator,
// docs/curation.md). They are review items like the others: a person
// approves or rejects them, and approval applies them through the same
// code paths as direct writes. The curator carries them out, through the
// [KindHandler] it registers.
const (
	// KindArchive proposes moving facts no one recalled for archive_days
	// to review/archive/facts/ (agents.RemoveFact).
	KindArchive = "archive"
	// KindSpill proposes moving the least-used entries of a MEMORY.md or
	// USER.md past its pressure threshold into fact files, leaving a
	// one-line pointer to each in memory.
	KindSpill = "spill"
	// KindPromote proposes a fact recalled often, from several queries,
	// for MEMORY.md.
	KindPromote = "promote"
	// KindMerge proposes making near-duplicate facts of one agent one:
	// the most recalled (else newest) is kept with the others' distinct
	// lines appended, and the others move to review/archive/facts/.
	KindMerge = "merge"
)

// A KindHandler carries out approved items of a kind that a package above
// retention files (the curator's proposals, sync conflicts). Retention calls it, with the
// review lock held, from [Approve], [ApproveAll] and [Reconcile], and when
// it finishes a decision a killed process left half done.
type KindHandler struct {
	// Apply carries out an approved item and returns what it wrote, the
	// item's result. On an error nothing may be left half applied.
	Apply func(v *vault.Vault, it Item, now time.Time) (string, error)
	// Landed reports whether the item's change is already in place, from
	// this very item (a process killed after applying but before
	// archiving left it so), and what it wrote.
	Landed func(v *vault.Vault, it Item) (result string, ok bool)
	// Affected lists the files approving the item may change, beyond its
	// pending and archive files: what approve --all snapshots first.
	Affected func(it Item) []string
}

var kinds struct {
	sync.RWMutex
	m map[string]KindHandler
}

// RegisterKind makes retention carry out approved items of kind with h. A
// package that files items of its own kinds registers them from an init
// function (as image formats register with package image), so every
// program that can file such an item can carry it out; a program that
// does not link that package refuses to approve the item ("unknown
// kind"), leaving it pending. Registering a kind twice, or one of
// retention's own, panics.
func RegisterKind(kind string, h KindHandler) {
	if h.Apply == nil || h.Landed == nil || h.Affected == nil {
		panic(fmt.Sprintf("retention: RegisterKind %q: a handler needs Apply, Landed and Affected", kind))
	}
	kinds.Lock()
	defer kinds.Unlock()
	if _, dup := kinds.m[kind]; dup || kind == KindFact || kind == KindMemory {
		panic(fmt.Sprintf("retention: RegisterKind %q twice", kind))
	}
	if kinds.m == nil {
		kinds.m = map[string]KindHandler{}
	}
	kinds.m[kind] = h
}

// handlerFor returns the registered handler of kind.
func handlerFor(kind string) (KindHandler, bool) {
	kinds.RLock()
	defer kinds.RUnlock()
	h, ok := kinds.m[kind]
	return h, ok
}
