package agents

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/vault"
)

// maxSlugRunes bounds a slug so that the file name stays well under every
// file system's limit, even in scripts that take 3 bytes per code point.
const maxSlugRunes = 64

// reservedSlugs are file stems a fact may not take: the index itself, and
// names Windows refuses as files. Compared in lower case.
var reservedSlugs = map[string]bool{
	"index": true, "con": true, "prn": true, "aux": true, "nul": true,
	"com1": true, "com2": true, "com3": true, "com4": true, "com5": true,
	"com6": true, "com7": true, "com8": true, "com9": true,
	"lpt1": true, "lpt2": true, "lpt3": true, "lpt4": true, "lpt5": true,
	"lpt6": true, "lpt7": true, "lpt8": true, "lpt9": true,
}

// Slugify turns a fact name into the stem of its file name: NFC-normalised,
// lower-cased, letters and digits of any script kept (so "배포 규칙" becomes
// "배포-규칙"), every run of other characters turned into one '-', no '-' at
// either end, at most 64 code points. A name with no letter or digit slugs
// to nothing and is refused with an error wrapping [vault.ErrInvalid].
func Slugify(name string) (string, error) {
	var b strings.Builder
	dash := false
	n := 0
	for _, r := range norm.NFC.String(name) {
		if n >= maxSlugRunes {
			break
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
				n++
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
			n++
		default:
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if s == "" || !startsWithLetterOrDigit(s) {
		return "", fmt.Errorf("fact name %q has no letter or digit to make a file name from: %w", name, vault.ErrInvalid)
	}
	return norm.NFC.String(s), nil
}

func startsWithLetterOrDigit(s string) bool {
	for _, r := range s {
		return unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return false
}

// validSlug reports whether s may name an existing fact file in an agent's
// memory folder: one path segment, not hidden, no separators.
func validSlug(s string) error {
	if s == "" || strings.ContainsAny(s, `/\:`) || strings.HasPrefix(s, ".") || strings.ContainsRune(s, 0) {
		return fmt.Errorf("%q is not a fact slug: %w", s, vault.ErrInvalid)
	}
	if _, err := vault.CleanRel(s); err != nil {
		return fmt.Errorf("%q is not a fact slug: %w", s, vault.ErrInvalid)
	}
	if strings.EqualFold(s, "INDEX") {
		return fmt.Errorf("INDEX is the memory index, not a fact: %w", vault.ErrInvalid)
	}
	return nil
}

// sameName compares two fact names the way a person would: NFC, case
// folded, inner whitespace collapsed.
func sameName(a, b string) bool {
	return strings.EqualFold(nameKey(a), nameKey(b))
}

func nameKey(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(norm.NFC.String(s)), " "))
}
