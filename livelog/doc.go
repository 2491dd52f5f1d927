// Package livelog is Nexus's shared, signed, append-only memory (SPEC §4):
// the live-context log every agent reads before it replies, the decision
// log, and each agent's work checkpoints (agents/NAME/checkpoints/).
//
// # Feeds
//
// The log is a set of append-only feeds, one per writer: an agent on one
// device, "lyra@vps" (see [Log.Writer]). A writer appends only to its own
// files — log/live/YYYY-MM/WRITER.md, a file per month chosen by the
// entry's time ([FeedPath]), and log/decisions/WRITER.md ([DecisionFeedPath])
// — so no log file ever has two writers, and a file-sync tool never sees
// two versions of one to choose between. Logs of the earlier single-file
// layout (log/live/YYYY-MM.md, log/decisions.md: one chain shared by every
// agent) are still read and verified; new entries go to feeds.
//
// # Entries
//
// An entry is a markdown block that reads well in Obsidian:
//
//	### 2026-11-29T15:05:37Z lyra [deploy/shipped] Fixed login timeout; PR #123 merged
//	Optional markdown body, any number of lines.
//	<!-- nexus w=lyra@vps seq=7 prev=CHAIN-HASH cites=ella@vps:3:HASH16 sig=SIGNATURE -->
//
// The HTML comment carries the writer, the entry's number in its feed, the
// chain hash of the feed's previous entry, the heads of the other feeds the
// writer had read (cites), optionally a gap the writer found in its own
// feed, an idempotency key's digest and a quarantine rule, and the agent's
// ed25519 signature over all of it and the entry's text (see
// [Entry.Canonical]); the chain hash of an entry is the SHA-256 of its
// signature. Text without a signature line (a person's note) is kept,
// shown by [Log.Read] and reported as unsigned by [Log.Verify]. The grammar
// is in docs/livelog.md.
//
// # Appends and locks
//
// [Log.Append] scans what is new in the other writers' feeds (without a
// lock), then takes the writer's feed lock — the vault lock
// "livelog-STREAM-WRITER", a flock(2) on .nexus/state/locks/ — and, under
// it, finds the end of its own feed, numbers and signs the entries and
// writes each batch of records with one O_APPEND write, then the feed's
// hint (.nexus/state/livelog/feeds/STREAM/WRITER.json: where the feed
// ends, so the next append need not scan). It lets go of the lock, records
// what it read and wrote in the witness, and fsyncs before it returns: an
// acknowledged entry is durable. Appends of one writer from any number of
// goroutines and processes are serialised; those of different writers run
// at once. A record torn by a crash is found by the next append, which
// marks it and starts on a clean line; NUL bytes padding the file's end
// (file systems that set the size before the data) are cut first, so the
// feed stays text. Readers take no feed lock: they
// parse complete records only (one that acknowledges takes the agent's
// cursor lock, and one that finds new entries updates the witness under
// its lock).
//
// # Witness, cursors, state
//
// The witness (.nexus/state/livelog/witness.json, under the vault lock
// "livelog-witness") is this machine's record of the highest entry it has
// seen of every feed, with a valid signature, and of how far it has read
// each feed file. With it, an entry cut from a feed after this machine saw
// it stays reported, and an append whose own feed lost entries numbers
// after them and records the gap in its signed text. Each agent has a read
// cursor on each machine (.nexus/state/livelog/cursors/AGENT.json, under
// "livelog-cursor-AGENT"): a position in every feed file, so that
// [Log.Unread] returns, oldest first, what the agent has not acknowledged,
// also entries that arrived late by sync, in time proportional to what is
// new. State files are machine-local, sealed with a checksum of their
// text, and not fsynced: losing one costs a rescan, never an entry.
//
// # Reading and verifying
//
// Reading merges every feed into one order — causal (after the previous
// entry of its feed and every entry it cites), then time, writer, hash —
// the same on every machine holding the same files. [Log.Verify] names,
// block by block, what is intact, edited, forged, reordered, removed
// (gaps, cut-off tails, cited entries gone), forked (one writer's number
// used twice), not here yet, truncated or unsigned, checking signatures
// against the agents' keys in their IDENTITY.md on all cores.
//
// A [Log] is safe for concurrent use.
package livelog
