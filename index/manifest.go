package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/vault"
)

// The manifest is a text file, one line per indexed file, because it is
// read by every process that opens the index: JSON took about 100 ms to
// decode for 100,000 files, this format a fraction of that.
//
//	nexus-index-manifest 3 schema=8 last_update=2026-11-29T16:00:00Z files=N [docs=N] [partial=1] digest=HEX32 crc=HEX8
//	SIZE<TAB>MTIME_UNIX_NANO<TAB>CTIME_UNIX_NANO<TAB>SUM<TAB>"key"<TAB>"disk path, when it differs"[<TAB>LOG]
//
// SUM is the CRC-32C of the content indexed (8 hex digits), or "-".
// (Version 2, read too, has neither CTIME nor SUM: its files' change times
// are unknown until the next sync records them.)
//
// LOG, for a file of the log only, is OFFSET:LINE:CRC (decimal, decimal,
// 8 hex digits): where its last indexed block starts and the CRC-32C of
// the bytes before it.
//
// The header carries the number of files, a digest of them (see
// [fileDigest]) and the CRC-32C of the lines after it. A process that
// only searches compares the digest with one of the files on disk and,
// when they are equal, never parses the lines: the index is fresh.
// Manifests without these fields (older Nexus) are read in full.
const (
	manifestMagic   = "nexus-index-manifest 3"
	manifestMagicV2 = "nexus-index-manifest 2"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// digest is an order-independent digest of a set of files: the sum, lane
// by lane, of each file's [fileDigest]. Adding or removing one file's
// digest updates it, so it is kept current as the manifest changes.
type digest [2]uint64

func (d *digest) add(e digest) { d[0] += e[0]; d[1] += e[1] }
func (d *digest) sub(e digest) { d[0] -= e[0]; d[1] -= e[1] }

// fileDigest digests what the freshness check compares for one file: its
// key, its on-disk path when that differs ("" otherwise), its size, its
// mtime and its change time. Two sets of files have the same digest (and count) only if they
// hold the same files with the same sizes, mtimes and paths, but for a
// chance of about 2^-128: each lane is a different seeded mix of every
// byte, so no change of a field, nor a swap of values between files,
// leaves the sum as it was.
func fileDigest(key, disk string, size, mtime, ctime int64) digest {
	var d digest
	for lane, seed := range [2]uint64{0x9e3779b97f4a7c15, 0xd6e8feb86659fd93} {
		h := absorb(seed, key)
		h = absorb(h, disk)
		h = mix64(h ^ uint64(size))
		h = mix64(h ^ uint64(mtime))
		h = mix64(h ^ uint64(ctime))
		d[lane] = h
	}
	return d
}

// absorb mixes s, then its length, into h.
func absorb(h uint64, s string) uint64 {
	for len(s) >= 8 {
		h = mix64(h ^ binary.LittleEndian.Uint64([]byte(s[:8])))
		s = s[8:]
	}
	var t uint64
	for i := 0; i < len(s); i++ {
		t |= uint64(s[i]) << (8 * i)
	}
	return mix64(mix64(h^t) ^ uint64(len(s)))
}

// mix64 is SplitMix64's finaliser: a bijection that spreads every input
// bit over the output.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

func (f fileState) digest(key string) digest {
	return fileDigest(key, f.Disk, f.Size, f.Mtime, f.Ctime)
}

func encodeManifest(m manifest) []byte {
	var b bytes.Buffer
	b.Grow(len(m.files) * 80)
	keys := make([]string, 0, len(m.files))
	var sum digest
	for k, f := range m.files {
		keys = append(keys, k)
		sum.add(f.digest(k))
	}
	sort.Strings(keys)
	var num []byte
	for _, k := range keys {
		f := m.files[k]
		num = strconv.AppendInt(num[:0], f.Size, 10)
		b.Write(num)
		b.WriteByte('\t')
		num = strconv.AppendInt(num[:0], f.Mtime, 10)
		b.Write(num)
		b.WriteByte('\t')
		num = strconv.AppendInt(num[:0], f.Ctime, 10)
		b.Write(num)
		b.WriteByte('\t')
		if f.Summed {
			fmt.Fprintf(&b, "%08x", f.Sum)
		} else {
			b.WriteByte('-')
		}
		b.WriteByte('\t')
		b.WriteString(strconv.Quote(k))
		b.WriteByte('\t')
		if f.Disk != "" {
			b.WriteString(strconv.Quote(f.Disk))
		}
		if f.LogLine > 0 {
			b.WriteByte('\t')
			num = strconv.AppendInt(num[:0], f.LogOff, 10)
			b.Write(num)
			b.WriteByte(':')
			num = strconv.AppendInt(num[:0], int64(f.LogLine), 10)
			b.Write(num)
			fmt.Fprintf(&b, ":%08x", f.LogCRC)
		}
		b.WriteByte('\n')
	}
	body := b.Bytes()
	docs := ""
	if m.docs >= 0 {
		docs = fmt.Sprintf(" docs=%d", m.docs)
	}
	if m.partial {
		docs += " partial=1"
	}
	head := fmt.Sprintf("%s schema=%d last_update=%s files=%d%s digest=%016x%016x crc=%08x\n", manifestMagic, m.Schema, m.LastUpdate.UTC().Format(time.RFC3339Nano), len(keys), docs, sum[0], sum[1], crc32.Checksum(body, castagnoli))
	return append([]byte(head), body...)
}

var errBadManifest = errors.New("bad index manifest")

// decodeManifest decodes a whole manifest.
func decodeManifest(data []byte) (manifest, error) {
	m, err := decodeManifestHead(data)
	if err != nil {
		return m, err
	}
	return m, m.decodeBody()
}

// decodeManifestHead decodes a manifest's header and checks the CRC of
// its lines, leaving them to [manifest.decodeBody].
func decodeManifestHead(data []byte) (manifest, error) {
	m := manifest{docs: -1}
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	h := string(head)
	switch {
	case strings.HasPrefix(h, manifestMagic+" "):
		m.ctimes = true
	case strings.HasPrefix(h, manifestMagicV2+" "):
	default:
		return m, errBadManifest
	}
	var hasCount, hasDigest, hasCRC bool
	for _, kv := range strings.Fields(h[len(manifestMagic):]) {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "schema":
			n, err := strconv.Atoi(v)
			if err != nil {
				return m, errBadManifest
			}
			m.Schema = n
		case "last_update":
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return m, errBadManifest
			}
			m.LastUpdate = t
		case "files":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return m, errBadManifest
			}
			m.n, hasCount = n, true
		case "docs":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return m, errBadManifest
			}
			m.docs = n
		case "digest":
			a, err1 := strconv.ParseUint(v[:min(16, len(v))], 16, 64)
			b, err2 := strconv.ParseUint(v[min(16, len(v)):], 16, 64)
			if len(v) != 32 || err1 != nil || err2 != nil {
				return m, errBadManifest
			}
			m.sum, hasDigest = digest{a, b}, true
		case "partial":
			m.partial = v == "1"
		case "crc":
			c, err := strconv.ParseUint(v, 16, 32)
			if err != nil || len(v) != 8 {
				return m, errBadManifest
			}
			if uint32(c) != crc32.Checksum(rest, castagnoli) {
				return m, errBadManifest // damaged
			}
			hasCRC = true
		}
	}
	// A version 2 header's digest left the change times out: it proves
	// nothing about files that have them.
	m.headSum = hasCount && hasDigest && hasCRC && m.ctimes
	m.body = rest
	return m, nil
}

// decodeBody parses the manifest's lines (once) and recomputes the
// digest and count from them.
func (m *manifest) decodeBody() error {
	if m.files != nil {
		return nil
	}
	rest := m.body
	files := make(map[string]fileState, bytes.Count(rest, []byte("\n")))
	var sum digest
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if len(line) == 0 {
			continue
		}
		sizeB, line, ok1 := bytes.Cut(line, []byte("\t"))
		mtimeB, line, ok2 := bytes.Cut(line, []byte("\t"))
		ctimeB, sumB, okC, okS := []byte("0"), []byte("-"), true, true
		if m.ctimes {
			ctimeB, line, okC = bytes.Cut(line, []byte("\t"))
			sumB, line, okS = bytes.Cut(line, []byte("\t"))
		}
		keyB, line, ok3 := bytes.Cut(line, []byte("\t"))
		diskB, logB, hasLog := bytes.Cut(line, []byte("\t"))
		if !ok1 || !ok2 || !okC || !okS || !ok3 || bytes.IndexByte(logB, '\t') >= 0 {
			return errBadManifest
		}
		size, err1 := parseInt(sizeB)
		mtime, err2 := parseInt(mtimeB)
		ctime, errC := parseInt(ctimeB)
		key, err3 := unquote(keyB)
		if err1 != nil || err2 != nil || errC != nil || err3 != nil || key == "" {
			return errBadManifest
		}
		f := fileState{Size: size, Mtime: mtime, Ctime: ctime}
		if string(sumB) != "-" {
			sum, err := strconv.ParseUint(string(sumB), 16, 32)
			if err != nil || len(sumB) != 8 {
				return errBadManifest
			}
			f.Sum, f.Summed = uint32(sum), true
		}
		if len(diskB) > 0 {
			disk, err := unquote(diskB)
			if err != nil {
				return errBadManifest
			}
			f.Disk = disk
		}
		if hasLog {
			if err := parseLogMark(logB, &f); err != nil {
				return err
			}
		}
		if old, dup := files[key]; dup {
			sum.sub(old.digest(key))
		}
		files[key] = f
		sum.add(f.digest(key))
	}
	m.files, m.sum, m.n, m.body = files, sum, len(files), nil
	return nil
}

// parseLogMark parses a log file's OFFSET:LINE:CRC into f.
func parseLogMark(b []byte, f *fileState) error {
	offB, rest, ok1 := bytes.Cut(b, []byte(":"))
	lineB, crcB, ok2 := bytes.Cut(rest, []byte(":"))
	if !ok1 || !ok2 || len(crcB) != 8 {
		return errBadManifest
	}
	off, err1 := parseInt(offB)
	line, err2 := parseInt(lineB)
	crc, err3 := strconv.ParseUint(string(crcB), 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || off < 0 || line < 1 || line > math.MaxInt32 {
		return errBadManifest
	}
	f.LogOff, f.LogLine, f.LogCRC = off, int(line), uint32(crc)
	return nil
}

// parseInt is strconv.ParseInt(string(b), 10, 64) without the copy; it
// leaves what it does not handle (a sign other than '-', a possible
// overflow) to strconv.
func parseInt(b []byte) (int64, error) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return strconv.ParseInt(string(b), 10, 64)
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, errBadManifest
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return strconv.ParseInt(string(b), 10, 64) // out of range (or MinInt64)
		}
		n = n*10 + d
	}
	if len(digits) < len(b) {
		n = -n
	}
	return n, nil
}

// unquote is strconv.Unquote with a fast path for the common case, a
// quoted string with no escapes.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b[1:len(b)-1], '"') < 0 && utf8.Valid(b) && isPrintable(b) {
		return string(b[1 : len(b)-1]), nil
	}
	return strconv.Unquote(string(b))
}

// isPrintable reports whether b has no control bytes (which strconv.Quote
// would have escaped, so a manifest holding them was not written by us).
func isPrintable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// same reports whether the file found on disk as now (at disk) is the one
// the index holds as f: the same size, mtime, change time (when both are
// known) and on-disk path.
func (f fileState) same(now fileState, disk string) bool {
	return f.Size == now.Size && f.Mtime == now.Mtime && f.Disk == disk && (f.Ctime == now.Ctime || f.Ctime == 0 || now.Ctime == 0)
}

// fileState is what the index knows about one indexed file.
type fileState struct {
	Size  int64 // bytes
	Mtime int64 // unix nanoseconds
	// Ctime is the inode's change time (unix nanoseconds), which no
	// program can set: an edit that keeps the size and whose mtime a tool
	// set back (a sync tool or an archive restoring it) still moves it.
	// 0 where the system gives none (Windows) or the manifest predates it;
	// then size and mtime alone decide (see [fileState.same]).
	Ctime int64
	Disk  string // on-disk relative path when it differs from the NFC key
	// Sum is the CRC-32C of the content indexed, when Summed (a note that
	// was read; not a file of the log or one too big to index): with it a
	// file whose change time alone moved (a chmod, a copy that kept the
	// mtimes) is told apart from an edit by reading it, not indexing it.
	Sum    uint32
	Summed bool

	// A file of the log (see logdocs.go): where its last block starts
	// (byte offset and 1-based line; LogLine 0 for other files) and the
	// CRC-32C of the bytes before it.
	LogOff  int64
	LogLine int
	LogCRC  uint32
}

type manifest struct {
	Schema     int
	LastUpdate time.Time

	// files is nil until the lines are decoded (body holds them then):
	// use [Index.files], [manifest.set] and [manifest.del].
	files map[string]fileState
	body  []byte
	// sum and n are the digest and number of files. Before the lines are
	// decoded they are the header's, and count only when headSum is set
	// (the header had them and the lines' CRC matched).
	sum     digest
	n       int
	headSum bool
	// docs is the number of documents the index held when the manifest
	// was saved (-1: not recorded, a manifest of an older Nexus). Files
	// may give none (binary, too big): see [checkDocs].
	docs int
	// ctimes says the lines hold change times (version 3): a manifest
	// without them is written again at the next save.
	ctimes bool
	// partial says the last sync stopped before every file was indexed
	// (see [Index.SyncFor]): the header's "partial=1", which an older
	// Nexus ignores (its next sync indexes the rest all the same).
	partial bool
}

// newManifest is an empty manifest of this schema.
func newManifest() manifest {
	return manifest{Schema: schemaVersion, files: map[string]fileState{}, headSum: true, ctimes: true, docs: 0}
}

// set records what the index holds of key. The lines must be decoded.
func (m *manifest) set(key string, f fileState) {
	if old, ok := m.files[key]; ok {
		m.sum.sub(old.digest(key))
	} else {
		m.n++
	}
	m.files[key] = f
	m.sum.add(f.digest(key))
}

// del forgets key. The lines must be decoded.
func (m *manifest) del(key string) {
	if old, ok := m.files[key]; ok {
		m.sum.sub(old.digest(key))
		m.n--
		delete(m.files, key)
	}
}

// files returns the manifest's files, decoding its lines the first time.
// Lines that do not decode although their CRC matched (a manifest no
// Nexus wrote) leave the index in an unknown state: the next sync
// empties it and indexes every file again. ix.mu must be held.
func (ix *Index) files() map[string]fileState {
	if ix.man.files == nil {
		if err := ix.man.decodeBody(); err != nil {
			ix.warn(fmt.Sprintf("index manifest unreadable (%v); indexing every file again", err))
			ix.man = newManifest()
			ix.manLost = true
			ix.dirty = true
		}
	}
	if !ix.man.ctimes {
		// A version 2 manifest: written again, with the change times the
		// next sync records (see [Index.syncFiles]).
		ix.man.ctimes, ix.dirty = true, true
	}
	return ix.man.files
}

// loadManifest reads the manifest's header (see [decodeManifestHead]); a
// missing or unreadable one is empty (schema 0), which makes Open rebuild
// the index.
func (ix *Index) loadManifest() manifest {
	data, err := vault.ReadFile(filepath.Join(ix.dir, manifestFile))
	if err != nil {
		return manifest{files: map[string]fileState{}}
	}
	m, err := decodeManifestHead(data)
	if err != nil {
		return manifest{files: map[string]fileState{}}
	}
	if !m.headSum {
		// An older manifest: no digest to compare with.
		if err := m.decodeBody(); err != nil {
			return manifest{files: map[string]fileState{}}
		}
	}
	return m
}

// saveManifest writes the manifest if it changed. ix.mu must be held.
func (ix *Index) saveManifest() error {
	if err := ix.saveWarnings(); err != nil {
		return err
	}
	if !ix.dirty || ix.ro != roNone {
		return nil
	}
	ix.files()
	data := encodeManifest(ix.man)
	if err := vault.WriteFile(filepath.Join(ix.dir, manifestFile), data, 0o644); err != nil {
		return fmt.Errorf("save index manifest: %w", err)
	}
	ix.dirty = false
	return nil
}
