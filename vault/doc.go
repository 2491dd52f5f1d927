// Package vault finds, creates and guards a Nexus vault: a folder of plain
// markdown that people also open in Obsidian, with Nexus's own state under
// .nexus/.
//
// It is the leaf of Nexus's packages. It turns vault-relative paths into real
// ones and refuses any that escape the vault, loads the configuration, and
// offers the two write disciplines every other package uses: atomic replace
// (optionally compare-and-swap against a person's concurrent save) and
// cross-process locks on lock files under .nexus/state/locks/.
package vault
