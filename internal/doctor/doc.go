// Package doctor checks the health of a Nexus vault: the configuration
// parses, private keys are readable only by their owner and match the public
// keys in IDENTITY.md, the live log verifies, the search index is current,
// no lock is held for long, no temp file was left behind by a crash, and no
// review waits for more than a week.
//
// Each problem is a [Finding] that names the exact command that fixes it.
// Doctor only reads: it never changes the vault. (Checking a lock takes it
// for an instant, the way any Nexus command would.)
package doctor
