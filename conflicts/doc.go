// Package conflicts reconciles the sync conflicts of a vault shared through
// git, Syncthing, Dropbox, iCloud Drive or Obsidian Sync (SPEC §11,
// docs/operations.md "How conflicts are handled"): conflict copies a sync tool leaves beside a file and git
// conflict markers inside one.
//
// [Find] lists them, for doctor; [Resolve] handles every one it can: a
// bounded-memory file's two versions are merged without judgement (the
// union of their entries), a pending review item's two versions by their
// decisions, a memory/INDEX.md copy is archived (the index is derived
// from the fact files), and two versions that need a person are filed as a review item of kind [retention.KindConflict],
// which this package carries out once approved (it registers the kind
// with [retention.RegisterKind]). Every copy ends in [ArchiveDir]; nothing
// is deleted. A keeper runs [Keep] before each reconcile.
//
// The pieces lower packages need stay with them: recognising a
// conflict-copy name and splitting conflict markers are in vault
// ([vault.ParseConflictName], [vault.IsConflictCopy],
// [vault.SplitConflictMarkers]), because agents and retention skip
// conflict copies when they list their own files; setting aside a
// conflicted .nexus/config.yaml is [vault.SetAsideConflictedConfig], which
// needs the config parser and runs before a vault can open; and merging
// two versions of MEMORY.md is [agents.Memory.Merge], which needs the
// memory file's parser and its write path.
package conflicts
