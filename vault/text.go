package vault

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// CheckText rejects text that no Nexus file should take: empty (after
// trimming), invalid UTF-8, NUL bytes, or more than maxBytes bytes. field
// names the input in the error, for example "content".
func CheckText(field, s string, maxBytes int) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8 text: %w", field, ErrInvalid)
	case strings.ContainsRune(s, 0):
		return fmt.Errorf("%s contains a NUL byte: %w", field, ErrInvalid)
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("%s is empty: %w", field, ErrInvalid)
	case maxBytes > 0 && len(s) > maxBytes:
		return fmt.Errorf("%s is %d bytes, more than the %d allowed: %w", field, len(s), maxBytes, ErrTooLarge)
	}
	return nil
}
