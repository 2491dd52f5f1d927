package livelog

import (
	"crypto/ed25519"
	"encoding/binary"
	"sort"
	"strconv"

	"github.com/nexus-memory/nexus/identity"
)

// blockKind is what one block of a log file is, judged on its own (see
// [classify]).
type blockKind int

const (
	// notSigned: a record torn by a crash, a damaged signature line, or
	// text typed by hand. Not an entry of any chain or feed.
	notSigned blockKind = iota
	// headless: a signed entry whose signature line has lost its entry
	// header. Counted as signed, never linked.
	headless
	// badSignature: a signed entry whose signature is not base64url.
	badSignature
	// toCheck: a signed entry whose signature is to be checked against
	// its agent's key.
	toCheck
)

// classify judges one block on its own, the same for feed files and for
// the older single chain: what it is, the finding it gets on its own
// (f, as the caller filled it in from e, with a status and detail; for
// toCheck, f unchanged) and, for toCheck, its decoded signature.
// Everything that depends on other blocks — links, sequence numbers,
// cites, whose key signed — is the caller's.
func classify(e *Entry, f Finding) (blockKind, Finding, []byte) {
	switch {
	case e.Torn:
		f.Status, f.Detail = StatusTruncated, "record cut short (torn tail from a crash, or the file was truncated)"
		if e.steppedOver {
			f.Recovered = true
			f.Detail = "record cut short by a crash; a later append found it and went on on a clean line (never acknowledged, nothing acknowledged is lost)"
		}
		return notSigned, f, nil
	case !e.Signed && e.damaged:
		f.Status, f.Detail = StatusEdited, "its signature line is damaged"
		return notSigned, f, nil
	case !e.Signed:
		f.Status, f.Detail = StatusUnsigned, "text without a signature (typed by hand?)"
		if e.Hand {
			f.Agent = ""
		}
		return notSigned, f, nil
	case e.damaged:
		f.Status, f.Detail = StatusEdited, "signature line without a valid entry header (the header was changed or removed)"
		return headless, f, nil
	}
	sig, err := b64.DecodeString(e.Sig)
	if err != nil {
		f.Status, f.Detail = StatusEdited, "signature is not valid base64url"
		return badSignature, f, nil
	}
	return toCheck, f, sig
}

// prefix8 is the first 8 bytes of a chain hash (0 if s is not one): what
// verification keeps of each entry to match links and cites.
func prefix8(s string) uint64 {
	h, ok := parseHash(s)
	if !ok {
		return 0
	}
	return binary.BigEndian.Uint64(h[:8])
}

// sigChecker checks signatures in batches of 256 on one worker per core
// (see [startSigWorkers]).
type sigChecker struct {
	jobs  chan sigBatch
	stop  func()
	bads  *[]Finding
	batch sigBatch
}

func newSigChecker(kr identity.Keyring) *sigChecker {
	c := &sigChecker{}
	c.jobs, c.stop, c.bads = startSigWorkers(kr)
	return c
}

// check queues one signature; f is the finding it gets if it fails.
func (c *sigChecker) check(f Finding, agent string, pub []byte, e *Entry, sig []byte) {
	c.checkWith(f, agent, pub, e, sig, nil, nil)
}

// checkWith is [sigChecker.check] of a feed entry, valid only with one of
// keys (see sigJob).
func (c *sigChecker) checkWith(f Finding, agent string, pub []byte, e *Entry, sig []byte, keys []ed25519.PublicKey, explain func(Finding, []byte, []byte) Finding) {
	c.batch = append(c.batch, sigJob{f: f, agent: agent, pub: pub, msg: e.Canonical(), sig: sig, keys: keys, explain: explain})
	if len(c.batch) == 256 {
		c.jobs <- c.batch
		c.batch = nil
	}
}

// wait checks what is queued and returns the findings of the signatures
// that failed. After an error, call abandon instead.
func (c *sigChecker) wait() []Finding {
	if len(c.batch) > 0 {
		c.jobs <- c.batch
	}
	c.stop()
	return *c.bads
}

// abandon stops the workers without checking what is still queued.
func (c *sigChecker) abandon() { c.stop() }

// addFindings adds the findings of one stream's files to r, in file order
// (files) and then by offset, with its signed entries: a signed entry is
// intact when no finding (but a benign one or a torn record) names it.
func addFindings(r *Report, findings []Finding, files []string, signed int) {
	order := make(map[string]int, len(files))
	for i, rel := range files {
		order[rel] = i
	}
	sort.SliceStable(findings, func(i, j int) bool {
		a, b := findings[i], findings[j]
		if a.File != b.File {
			return order[a.File] < order[b.File]
		}
		return a.Offset < b.Offset
	})
	badPos := map[string]bool{}
	for _, f := range findings {
		r.Counts[f.Status]++
		if !f.Benign() && f.Status != StatusTruncated && f.Line > 0 {
			badPos[f.File+":"+strconv.FormatInt(f.Offset, 10)] = true
		}
	}
	r.Entries += signed
	r.Counts[StatusIntact] += signed - len(badPos)
	r.Findings = append(r.Findings, findings...)
}
