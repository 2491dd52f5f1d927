//go:build !linux

package vault

// procLocksHolder: only Linux has /proc/locks; elsewhere the PID comes from
// the lock file (or is not known).
func procLocksHolder(string) int { return 0 }

// procNamesUs: no kernel lock table to name holders.
func procNamesUs() bool { return false }
