//go:build !linux

package livelog

// replaceState replaces the state file at path with data, by a new file
// renamed over it (only Linux swaps two files in place; see
// state_linux.go).
func replaceState(path string, data []byte) error { return renameState(path, data) }
