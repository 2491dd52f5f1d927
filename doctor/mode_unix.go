//go:build !windows

package doctor

// modesApply says whether Unix file modes protect key files here.
const modesApply = true
