// Package livelog is Nexus's shared, signed, append-only memory: the live
// context log every agent reads before it replies (log/live/YYYY-MM.md), the
// decision log (log/decisions.md) and each agent's work checkpoints
// (agents/NAME/checkpoints/).
//
// # Entries
//
// An entry is a markdown block that reads well in Obsidian:
//
//	### 2026-11-29T15:05:37Z lyra [deploy/shipped] Fixed login timeout; PR #123 merged
//	Optional markdown body, any number of lines.
//	<!-- nexus prev=CHAIN-HASH sig=SIGNATURE -->
//
// The HTML comment carries the ed25519 signature of the entry's agent over a
// canonical encoding of its fields and the chain hash of the signed entry
// before it (see [Canonical]); the chain hash of an entry is the SHA-256 of
// its signature. The chain runs across the monthly segments in name order.
// Text without a signature line (a person's hand-typed note) is kept, shown
// by [Log.Read] and reported as unsigned by [Log.Verify]; it is not part of
// the chain, so it never breaks verification of later agent entries.
//
// # Concurrency
//
// Appends from any number of goroutines and processes are serialised by the
// vault lock "livelog" (flock on .nexus/state/locks/livelog.lock); each
// record is one O_APPEND write, fsynced before [Log.Append] returns. Readers
// take no lock: they parse complete records only. A [Log] is safe for
// concurrent use.
package livelog
