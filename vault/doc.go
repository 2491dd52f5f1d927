// Package vault finds, creates and guards a Nexus vault: a folder of plain
// markdown that people also open in Obsidian, with Nexus's own state under
// .nexus/.
//
// It is the leaf of Nexus's packages. It turns vault-relative paths into real
// ones and refuses any that escape the vault, loads the configuration, and
// offers the two write disciplines every other package uses: atomic replace
// (optionally compare-and-swap against a person's concurrent save) and
// cross-process locks on lock files under .nexus/state/locks/. It also
// knows which machine it runs on (SPEC §4 "A device is a machine, not a
// name"): the device name, the machine's record of itself and the synced
// claims of device names, checked by [Vault.CheckMachine] before anything
// is written under the name.
package vault
