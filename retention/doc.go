// Package retention is the human review of what agents want to keep (SPEC
// §7): proposals filed as markdown in review/pending/, decided by a person
// with the CLI or by setting status: approved/rejected in Obsidian, applied
// through the same code paths as direct writes, and moved to
// review/archive/ with who decided, when and why. Bulk changes take a
// snapshot first (under .nexus/state/snapshots/) and can be rolled back.
//
// It owns the review queue and its items ([Retain], [WriteMemory], [List],
// [Approve], [Reject], [Reconcile]), the intents that finish a decision a
// killed process left half done ([Recover]), the snapshots ([TakeSnapshot],
// [Rollback]), the journey of what was proposed and decided ([Journey]),
// and the keeper that keeps a running vault in step with Obsidian
// ([Keeper]). The curator's proposals (package curator) and sync conflicts
// that need a person (package conflicts) are review items too: those
// packages register their kinds ([RegisterKind]) and carry them out when
// approved.
//
// Only a person approves: the package offers Approve and Reject for the CLI
// and Reconcile for edits made in Obsidian, and the MCP server exposes only
// Retain and WriteMemory to agents.
package retention
