package livelog

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// The witness and the feed hints are read and written on every append:
// encoding/json took a tenth of an append's CPU over 8 processes (a
// witness decode was ~23 µs, an encode ~9 µs). These are codecs of our
// own for the two documents, byte for byte the JSON that encoding/json
// writes, so files stay readable by every version, by people and by
// tools. The decoders take a fast path for text shaped as this encoder
// writes it (no escapes, no spaces, no duplicate or unknown keys, plain
// integers) and hand anything else — a file an older version or a person
// wrote — to encoding/json, so that what they accept is read exactly as
// encoding/json reads it (FuzzStateCodec checks both). Weighed again
// against plain encoding/json in December 2026 (docs/benchmarks.md,
// "State codec"): the witness keeps every feed file it has read, and with
// a year of feed files (240) encoding/json cost each append about 1 ms
// more CPU and about a third of the 8-process append rate, so it stays.

// appendJSONString appends s as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // escapes, non-ASCII, invalid UTF-8
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONTime appends t as encoding/json writes it; ok is false for a
// time it cannot write (a year outside 0-9999).
func appendJSONTime(b []byte, t time.Time) ([]byte, bool) {
	q, err := t.MarshalJSON()
	if err != nil {
		return b, false
	}
	return append(b, q...), true
}

// encodeWitness is json.Marshal(w).
func encodeWitness(w witness) ([]byte, error) {
	b := make([]byte, 0, 256+200*len(w.Files)+120*len(w.Feeds))
	b = append(b, `{"feeds":`...)
	if w.Feeds == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, stream := range sortedKeys(w.Feeds) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, stream)
			b = append(b, ':')
			m := w.Feeds[stream]
			if m == nil {
				b = append(b, "null"...)
				continue
			}
			b = append(b, '{')
			for j, writer := range sortedKeys(m) {
				if j > 0 {
					b = append(b, ',')
				}
				s := m[writer]
				b = appendJSONString(b, writer)
				b = append(b, `:{"seq":`...)
				b = strconv.AppendInt(b, s.Seq, 10)
				b = append(b, `,"hash":`...)
				b = appendJSONString(b, s.Hash)
				if !s.Time.IsZero() {
					b = append(b, `,"time":`...)
					var ok bool
					if b, ok = appendJSONTime(b, s.Time); !ok {
						return json.Marshal(w) // and its error
					}
				}
				b = append(b, '}')
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = append(b, `,"files":`...)
	if w.Files == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, rel := range sortedKeys(w.Files) {
			if i > 0 {
				b = append(b, ',')
			}
			s := w.Files[rel]
			b = appendJSONString(b, rel)
			b = append(b, `:{"offset":`...)
			b = strconv.AppendInt(b, s.Offset, 10)
			b = append(b, `,"anchor":`...)
			b = appendJSONString(b, s.Anchor)
			if s.Writer != "" {
				b = append(b, `,"writer":`...)
				b = appendJSONString(b, s.Writer)
			}
			if s.Seq != 0 {
				b = append(b, `,"seq":`...)
				b = strconv.AppendInt(b, s.Seq, 10)
			}
			if s.Hash != "" {
				b = append(b, `,"hash":`...)
				b = appendJSONString(b, s.Hash)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// encodeHint is json.Marshal(h).
func encodeHint(h feedHint) []byte {
	b := make([]byte, 0, 200+40*len(h.Cited))
	b = append(b, `{"file":`...)
	b = appendJSONString(b, h.File)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, h.Offset, 10)
	b = append(b, `,"anchor":`...)
	b = appendJSONString(b, h.Anchor)
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, h.Seq, 10)
	b = append(b, `,"hash":`...)
	b = appendJSONString(b, h.Hash)
	if len(h.Cited) > 0 {
		b = append(b, `,"cited":{`...)
		for i, w := range sortedKeys(h.Cited) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, w)
			b = append(b, ':')
			b = strconv.AppendInt(b, h.Cited[w], 10)
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// sortedKeys returns m's keys in the order encoding/json writes them.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// Insertion sort: these maps hold a few keys to a few hundred.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// decodeWitness decodes a witness document as json.Unmarshal would.
func decodeWitness(doc []byte) (witness, error) {
	if w, ok := fastWitness(doc); ok {
		return w, nil
	}
	var w witness
	err := json.Unmarshal(doc, &w)
	return w, err
}

// decodeHint decodes a feed hint as json.Unmarshal would.
func decodeHint(doc []byte) (feedHint, error) {
	if h, ok := fastHint(doc); ok {
		return h, nil
	}
	var h feedHint
	err := json.Unmarshal(doc, &h)
	return h, err
}

// scanner reads the subset of JSON the fast paths accept; every method
// reports false for anything else.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) lit(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null reads the literal null.
func (s *scanner) null() bool {
	if bytes.HasPrefix(s.b[s.i:], []byte("null")) {
		s.i += 4
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid
// UTF-8 (encoding/json would replace invalid bytes).
func (s *scanner) str() (string, bool) {
	if !s.lit('"') {
		return "", false
	}
	start := s.i
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			return string(raw), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
		s.i++
	}
	return "", false
}

// key reads an object key and its colon.
func (s *scanner) key() (string, bool) {
	k, ok := s.str()
	return k, ok && s.lit(':')
}

// int reads an integer as JSON writes it (no fraction, no exponent, no
// leading zero) that fits an int64.
func (s *scanner) int() (int64, bool) {
	start := s.i
	s.lit('-')
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || n > 1 && s.b[digits] == '0' || n > 19 {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
	return v, err == nil
}

// object reads {"key":value,...}, calling field for each key to read its
// value. Callers refuse repeated keys (encoding/json's handling of them
// differs between maps and structs).
func (s *scanner) object(field func(k string) bool) bool {
	if !s.lit('{') {
		return false
	}
	if s.lit('}') {
		return true
	}
	for {
		k, ok := s.key()
		if !ok || !field(k) {
			return false
		}
		if s.lit('}') {
			return true
		}
		if !s.lit(',') {
			return false
		}
	}
}

// once refuses a struct field read twice: bit is the field's, got the
// fields read so far.
func once(got *uint8, bit uint8) bool {
	if *got&bit != 0 {
		return false
	}
	*got |= bit
	return true
}

func fastWitness(doc []byte) (witness, bool) {
	s := &scanner{b: doc}
	var w witness
	var got uint8
	ok := s.object(func(k string) bool {
		switch k {
		case "feeds":
			if !once(&got, 1) {
				return false
			}
			if s.null() {
				return true
			}
			w.Feeds = map[string]map[string]seen{}
			return s.object(func(stream string) bool {
				if _, dup := w.Feeds[stream]; dup {
					return false
				}
				if s.null() {
					w.Feeds[stream] = nil
					return true
				}
				m := map[string]seen{}
				w.Feeds[stream] = m
				return s.object(func(writer string) bool {
					if _, dup := m[writer]; dup {
						return false
					}
					e, ok := s.seenEntry()
					m[writer] = e
					return ok
				})
			})
		case "files":
			if !once(&got, 2) {
				return false
			}
			if s.null() {
				return true
			}
			w.Files = map[string]scanned{}
			return s.object(func(rel string) bool {
				if _, dup := w.Files[rel]; dup {
					return false
				}
				f, ok := s.scannedEntry()
				w.Files[rel] = f
				return ok
			})
		}
		return false
	})
	return w, ok && s.i == len(doc)
}

// seenEntry reads one feed's entry of the witness.
func (s *scanner) seenEntry() (seen, bool) {
	var e seen
	var got uint8
	ok := s.object(func(k string) bool {
		var ok bool
		switch k {
		case "seq":
			if ok = once(&got, 1); ok {
				e.Seq, ok = s.int()
			}
		case "hash":
			if ok = once(&got, 2); ok {
				e.Hash, ok = s.str()
			}
		case "time":
			var t string
			if ok = once(&got, 4); ok {
				if t, ok = s.str(); ok {
					ok = e.Time.UnmarshalJSON([]byte(`"`+t+`"`)) == nil
				}
			}
		}
		return ok
	})
	return e, ok
}

// scannedEntry reads one file's entry of the witness.
func (s *scanner) scannedEntry() (scanned, bool) {
	var f scanned
	var got uint8
	ok := s.object(func(k string) bool {
		var ok bool
		switch k {
		case "offset":
			if ok = once(&got, 1); ok {
				f.Offset, ok = s.int()
			}
		case "anchor":
			if ok = once(&got, 2); ok {
				f.Anchor, ok = s.str()
			}
		case "writer":
			if ok = once(&got, 4); ok {
				f.Writer, ok = s.str()
			}
		case "seq":
			if ok = once(&got, 8); ok {
				f.Seq, ok = s.int()
			}
		case "hash":
			if ok = once(&got, 16); ok {
				f.Hash, ok = s.str()
			}
		}
		return ok
	})
	return f, ok
}

func fastHint(doc []byte) (feedHint, bool) {
	s := &scanner{b: doc}
	var h feedHint
	var got uint8
	ok := s.object(func(k string) bool {
		var ok bool
		switch k {
		case "file":
			if ok = once(&got, 1); ok {
				h.File, ok = s.str()
			}
		case "offset":
			if ok = once(&got, 2); ok {
				h.Offset, ok = s.int()
			}
		case "anchor":
			if ok = once(&got, 4); ok {
				h.Anchor, ok = s.str()
			}
		case "seq":
			if ok = once(&got, 8); ok {
				h.Seq, ok = s.int()
			}
		case "hash":
			if ok = once(&got, 16); ok {
				h.Hash, ok = s.str()
			}
		case "cited":
			if ok = once(&got, 32); ok {
				h.Cited = map[string]int64{}
				ok = s.object(func(w string) bool {
					if _, dup := h.Cited[w]; dup {
						return false
					}
					n, ok := s.int()
					h.Cited[w] = n
					return ok
				})
			}
		}
		return ok
	})
	return h, ok && s.i == len(doc)
}
