// Package dates reads the dates and times people type: every --since and
// --until of the nexus command line, and the date properties of notes
// (created:, date:, updated: in frontmatter).
//
// One set of layouts is accepted everywhere ([Layouts]):
//
//	2026-11-01                   a day (UTC)
//	2026-11-01T10:30             a minute (UTC)
//	2026-11-01T10:30:15          a second (UTC)
//	2026-11-01 10:30[:15]        the same, with a space (as people write it in YAML)
//	2026-11-01T10:30:15Z         RFC 3339, with any zone: +09:00, -05:00, Z
//	2026-11-01T19:30+09:00       a minute in a zone
//
// A time without a zone is UTC, so the same command means the same instant
// on every machine that shares the vault. Results are always in UTC.
package dates

import (
	"fmt"
	"strings"
	"time"
)

// layouts are the accepted layouts, in the order they are tried.
var layouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	dayLayout,
}

const dayLayout = "2006-01-02"

// Layouts returns the accepted layouts, in the order they are tried.
func Layouts() []string { return append([]string(nil), layouts...) }

// Help is a short description of the accepted input, for flag help and
// error messages.
const Help = "a date like 2026-11-01, a time like 2026-11-01T10:30 (UTC), or RFC 3339 like 2026-11-01T19:30:00+09:00"

// Error is returned for text that is no accepted date or time.
type Error struct {
	// Input is the text given.
	Input string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%q is not a date or time: use %s", e.Input, Help)
}

// Parse reads s in one of the accepted layouts (surrounding spaces are
// ignored) and returns the instant it names, in UTC. A plain date is the
// start of that day. Text in no layout returns an [*Error].
func Parse(s string) (time.Time, error) {
	t, _, err := parse(s)
	return t, err
}

// ParseEnd is [Parse] for the upper end of a range (--until): a plain date
// means the last instant of that day, so "--until 2026-11-01" includes all
// of November 1. A time means exactly that instant.
func ParseEnd(s string) (time.Time, error) {
	t, day, err := parse(s)
	if err == nil && day {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, err
}

func parse(s string) (t time.Time, day bool, err error) {
	in := strings.TrimSpace(s)
	for _, layout := range layouts {
		if t, err := time.Parse(layout, in); err == nil {
			return t.UTC(), layout == dayLayout, nil
		}
	}
	return time.Time{}, false, &Error{Input: s}
}
