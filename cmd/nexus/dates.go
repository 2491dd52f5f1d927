package main

import (
	"time"

	"github.com/nexus-memory/nexus/internal/dates"
)

// dateHelp is the flag help of every --since and --until.
const dateHelp = "2026-11-01, 2026-11-01T10:30 (UTC) or RFC 3339"

// parseDateFlag reads the value of a --since or --until flag (flag names it
// for the message) with the one set of layouts of internal/dates. An empty
// value is the zero time. With end, a plain date means the end of that day,
// as --until wants. A value in no layout is a usage error.
func parseDateFlag(flag, value string, end bool) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	parse := dates.Parse
	if end {
		parse = dates.ParseEnd
	}
	t, err := parse(value)
	if err != nil {
		return time.Time{}, usagef("%s %v", flag, err)
	}
	return t, nil
}
