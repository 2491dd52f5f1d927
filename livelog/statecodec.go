package livelog

import "encoding/json"

// The witness and the feed hints are plain encoding/json documents (then
// sealed, see sealState). These four name the encoding in one place, so
// that every reader and writer of the two documents agrees on it.
// Until December 2026 they were a hand-written codec writing the very same
// bytes; docs/benchmarks.md ("State codec") has the measurement that
// retired it: its saving was within the noise of an append's fsync.

// encodeWitness is the text of w's state file; it fails only for a time
// that JSON cannot carry (a year outside 0–9999).
func encodeWitness(w witness) ([]byte, error) { return json.Marshal(w) }

// encodeHint is the text of h's state file.
func encodeHint(h feedHint) ([]byte, error) { return json.Marshal(h) }

// decodeWitness reads a witness document.
func decodeWitness(doc []byte) (witness, error) {
	var w witness
	err := json.Unmarshal(doc, &w)
	return w, err
}

// decodeHint reads a feed hint document.
func decodeHint(doc []byte) (feedHint, error) {
	var h feedHint
	err := json.Unmarshal(doc, &h)
	return h, err
}
