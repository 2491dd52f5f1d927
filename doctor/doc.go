// Package doctor checks the health of a Nexus vault: the configuration
// parses, private keys are readable only by their owner and match the public
// keys in IDENTITY.md, the live log verifies, the search index is current,
// no lock is held for long, no temp file was left behind by a crash, and no
// review waits for more than a week.
//
// Each finding is a [Finding] that names the exact command that fixes it,
// with a [Severity]: a problem (something broken or at risk; the vault is
// not OK) or a note (worth knowing, produced by ordinary use; the vault is
// still OK). A check in its own file returns findings with the severity it
// chooses (a check is one line in the checks table of doctor.go and a
// method in its own file); a finding without one counts as a problem. The
// odd-files check reports, as notes, binary or non-UTF-8 .md files,
// byte-order marks, NFD names and symlinks out of the vault.
//
// Doctor only reads: it never changes the vault. (Checking a lock takes it
// for an instant, the way any Nexus command would.)
package doctor
