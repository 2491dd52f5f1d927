package person

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/vault"
)

// maxFileBytes bounds the key files read: a few hundred bytes each.
const maxFileBytes = 4096

// parseFields reads the small text format of key files: a first line that
// must be header, then "key: value" lines, each key once. Blank lines and
// lines starting with "#" are skipped. It never panics.
func parseFields(data []byte, header string) (map[string]string, error) {
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes: %w", maxFileBytes, vault.ErrInvalid)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("not UTF-8 text: %w", vault.ErrInvalid)
	}
	lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	if strings.TrimSpace(lines[0]) != header {
		return nil, fmt.Errorf("first line is not %q: %w", header, vault.ErrInvalid)
	}
	out := map[string]string{}
	for i, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		k, val, ok := strings.Cut(l, ":")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" {
			return nil, fmt.Errorf("line %d is not 'key: value': %w", i+2, vault.ErrInvalid)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("line %d repeats %s: %w", i+2, k, vault.ErrInvalid)
		}
		out[k] = val
	}
	return out, nil
}

// formatFields is the inverse of [parseFields], keys in the order given.
func formatFields(header string, kv [][2]string) []byte {
	var b bytes.Buffer
	b.WriteString(header + "\n")
	for _, f := range kv {
		fmt.Fprintf(&b, "%s: %s\n", f[0], f[1])
	}
	return b.Bytes()
}

// b64 is the encoding of binary fields.
var b64 = base64.StdEncoding

// field decodes a required base64 field of exactly n bytes (any length
// when n is 0).
func field(m map[string]string, key string, n int) ([]byte, error) {
	s, ok := m[key]
	if !ok || s == "" {
		return nil, fmt.Errorf("no %s: %w", key, vault.ErrInvalid)
	}
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not base64: %w", key, vault.ErrInvalid)
	}
	if n > 0 && len(b) != n {
		return nil, fmt.Errorf("%s is %d bytes, want %d: %w", key, len(b), n, vault.ErrInvalid)
	}
	return b, nil
}

// CheckName checks a person's key name: 1 to 64 letters, digits and
// ". _ @ -", not starting with "." or "-". Names become file names.
func CheckName(name string) error {
	if name == "" || len(name) > 64 || name[0] == '.' || name[0] == '-' {
		return fmt.Errorf("person name %q: want 1 to 64 letters, digits or . _ @ -, not starting with . or -: %w", name, vault.ErrInvalid)
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '@', r == '-':
		default:
			return fmt.Errorf("person name %q: want 1 to 64 letters, digits or . _ @ -, not starting with . or -: %w", name, vault.ErrInvalid)
		}
	}
	return nil
}
