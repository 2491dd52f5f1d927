// Package retention is the human review of what agents want to keep (SPEC
// §7): proposals filed as markdown in review/pending/, decided by a person
// with the CLI or by setting status: approved/rejected in Obsidian, applied
// through the same code paths as direct writes, and moved to
// review/archive/ with who decided, when and why. Bulk changes take a
// snapshot first (under .nexus/state/snapshots/) and can be rolled back.
//
// Only a person approves: the package offers Approve and Reject for the CLI
// and Reconcile for edits made in Obsidian, and the MCP server exposes only
// Retain and WriteMemory to agents.
package retention
