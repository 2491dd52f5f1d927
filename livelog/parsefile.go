package livelog

// ParseFeed parses the bytes of one log file: a feed file
// (log/live/YYYY-MM/WRITER.md, log/decisions/WRITER.md), a file a person
// put in a month folder, or a segment of an older vault's single chain
// (log/live/YYYY-MM.md, log/decisions.md). rel is its vault-relative path;
// it names the log (files under log/decisions are decisions) and is put in
// each Entry's Segment. Every block is returned in file order, signed
// entries, unsigned text and torn records alike, each with its 1-based
// Line, its byte Offset and End in data. Signatures are not checked (see
// [Log.Verify]). Quarantine is the rule recorded when the entry was
// written; clearings by a person are not applied. Data is not retained.
func ParseFeed(rel string, data []byte) []Entry {
	stream := streamLive
	if rel == "log/decisions.md" || len(rel) > len(DecisionsDir) && rel[:len(DecisionsDir)+1] == DecisionsDir+"/" {
		stream = streamDecisions
	}
	p := newParser(data, 0, 1, stream, rel)
	var out []Entry
	for {
		e, ok := p.next()
		if !ok {
			return out
		}
		out = append(out, e)
	}
}

// IsLogFile reports whether rel (vault-relative, slash form) is a file the
// log reads: a feed file, a file in a month folder of log/live, a decision
// feed, or an older vault's single-file segment or log/decisions.md.
func IsLogFile(rel string) bool { return isLogFile(rel) }
