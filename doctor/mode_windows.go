//go:build windows

package doctor

// modesApply says whether Unix file modes protect key files here. On
// Windows, access is governed by ACLs, which Go reports only as 0666/0444.
const modesApply = false
