// Package editsim simulates how editors save files, for tests of code that
// must live with a person editing the vault at the same moment.
package editsim

import (
	"os"
	"time"
)

// SaveInPlace saves text to path the way Obsidian (and many editors) do:
// it truncates the file now, through an open handle, and writes text
// through the same handle after delay. Another process reading in
// between sees an empty file; one that replaces the file meanwhile leaves
// the write to land in the replaced one. The returned channel gets the
// result of the write.
func SaveInPlace(path, text string, delay time.Duration) (<-chan error, error) {
	h, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(delay)
		_, err := h.WriteString(text)
		if cerr := h.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return done, nil
}
