package index

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
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
//	nexus-index-manifest 1 schema=6 last_update=2026-11-29T16:00:00Z
//	SIZE<TAB>MTIME_UNIX_NANO<TAB>"key"<TAB>"disk path, when it differs"[<TAB>LOG]
//
// LOG, for a file of the log only, is OFFSET:LINE:CRC (decimal, decimal,
// 8 hex digits): where its last indexed block starts and the CRC-32C of
// the bytes before it.
const manifestMagic = "nexus-index-manifest 2"

func encodeManifest(m manifest) []byte {
	var b bytes.Buffer
	b.Grow(len(m.Files) * 80)
	fmt.Fprintf(&b, "%s schema=%d last_update=%s\n", manifestMagic, m.Schema, m.LastUpdate.UTC().Format(time.RFC3339Nano))
	keys := make([]string, 0, len(m.Files))
	for k := range m.Files {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var num []byte
	for _, k := range keys {
		f := m.Files[k]
		num = strconv.AppendInt(num[:0], f.Size, 10)
		b.Write(num)
		b.WriteByte('\t')
		num = strconv.AppendInt(num[:0], f.Mtime, 10)
		b.Write(num)
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
	return b.Bytes()
}

var errBadManifest = errors.New("bad index manifest")

func decodeManifest(data []byte) (manifest, error) {
	m := manifest{Files: map[string]fileState{}}
	head, rest, _ := bytes.Cut(data, []byte("\n"))
	h := string(head)
	if !strings.HasPrefix(h, manifestMagic+" ") {
		return m, errBadManifest
	}
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
		}
	}
	m.Files = make(map[string]fileState, bytes.Count(rest, []byte("\n")))
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		if len(line) == 0 {
			continue
		}
		sizeB, line, ok1 := bytes.Cut(line, []byte("\t"))
		mtimeB, line, ok2 := bytes.Cut(line, []byte("\t"))
		keyB, line, ok3 := bytes.Cut(line, []byte("\t"))
		diskB, logB, hasLog := bytes.Cut(line, []byte("\t"))
		if !ok1 || !ok2 || !ok3 || bytes.IndexByte(logB, '\t') >= 0 {
			return m, errBadManifest
		}
		size, err1 := parseInt(sizeB)
		mtime, err2 := parseInt(mtimeB)
		key, err3 := unquote(keyB)
		if err1 != nil || err2 != nil || err3 != nil || key == "" {
			return m, errBadManifest
		}
		f := fileState{Size: size, Mtime: mtime}
		if len(diskB) > 0 {
			disk, err := unquote(diskB)
			if err != nil {
				return m, errBadManifest
			}
			f.Disk = disk
		}
		if hasLog {
			if err := parseLogMark(logB, &f); err != nil {
				return m, err
			}
		}
		m.Files[key] = f
	}
	return m, nil
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

// fileState is what the index knows about one indexed file.
type fileState struct {
	Size  int64  // bytes
	Mtime int64  // unix nanoseconds
	Disk  string // on-disk relative path when it differs from the NFC key

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
	Files      map[string]fileState
}

// loadManifest reads the manifest; a missing or unreadable one is empty
// (schema 0), which makes Open rebuild the index.
func (ix *Index) loadManifest() manifest {
	data, err := os.ReadFile(filepath.Join(ix.dir, manifestFile))
	if err != nil {
		return manifest{Files: map[string]fileState{}}
	}
	m, err := decodeManifest(data)
	if err != nil {
		return manifest{Files: map[string]fileState{}}
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
	data := encodeManifest(ix.man)
	if err := vault.WriteFile(filepath.Join(ix.dir, manifestFile), data, 0o644); err != nil {
		return fmt.Errorf("save index manifest: %w", err)
	}
	ix.dirty = false
	return nil
}
