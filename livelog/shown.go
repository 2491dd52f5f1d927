package livelog

import (
	"bytes"
	"strings"
)

// Shown returns data — bytes of the log file rel, from its line firstLine
// (1: the whole file) on a block boundary, as [ParseFeed] takes them — as
// another agent may see it (SPEC §2). Every entry shown quarantined (its
// recorded quarantine not cleared by a person, or unsigned text that fails
// the scan) keeps its first line's place, holding the entry's notice, and
// leaves its other lines empty, so every line number still holds; all
// other bytes are as they are. Data with no quarantined entry, or of a
// file that is not a log file, is returned as it is.
//
// Search snippets and memory_get use it: they put log text into a prompt
// as surely as a session start does.
func (l *Log) Shown(rel string, data []byte, firstLine int) []byte {
	if !IsLogFile(rel) {
		return data
	}
	entries := ParseFeed(rel, data)
	var (
		cl   clearedSet // read at the first entry that needs it
		out  []byte
		last int64
	)
	for i := range entries {
		e := &entries[i]
		if e.Signed && e.Quarantine == "" {
			continue
		}
		if cl == nil {
			cl = l.cleared()
		}
		cl.apply(e)
		if e.Quarantine == "" {
			continue
		}
		e.Line += firstLine - 1
		if out == nil {
			out = make([]byte, 0, len(data))
		}
		out = append(out, data[last:e.Offset]...)
		out = append(out, QuarantineNotice(e)...)
		out = append(out, strings.Repeat("\n", bytes.Count(data[e.Offset:e.End], []byte("\n")))...)
		last = e.End
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}
