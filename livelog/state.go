package livelog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/vault"
)

// The log's machine-local state files (the witness, the feed hints) are
// JSON documents sealed with a checksum of their own text:
//
//	{"sum":"<32 hex digits>",...the document's fields...}
//
// padded with spaces and ended with a newline. The sum is the first 16
// bytes of the SHA-256 of the document as it would read without the sum
// ("{...}"). It lets a reader tell a whole document from one a crash or a
// concurrent rewrite left half written: on Linux a state file is
// rewritten in place and swapped in (see replaceState), which costs no new
// file per update. Older versions ignore the field; files they wrote
// (without it) are read as before.

const sealPrefix = `{"sum":"`

// sumLen is the sum's length in hex digits.
const sumLen = 32

// errTornState is returned for a state file whose text does not match its
// sum, on every try.
var errTornState = errors.New("state file is half written (its checksum does not match)")

// sealState returns doc (a JSON object) with its sum, ended by a newline.
func sealState(doc []byte) []byte {
	doc = bytes.TrimRight(doc, " \n\x00") // as unsealState reads it
	sum := sha256.Sum256(doc)
	out := make([]byte, 0, len(doc)+len(sealPrefix)+sumLen+3)
	out = append(out, sealPrefix...)
	out = hex.AppendEncode(out, sum[:sumLen/2])
	out = append(out, '"')
	if rest := doc[1:]; len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	out = append(out, doc[1:]...)
	return append(out, '\n')
}

// unsealState returns the document in data and whether its sum matches;
// a document without a sum (written by an older version) is returned as
// it is.
func unsealState(data []byte) ([]byte, bool) {
	data = bytes.TrimRight(data, " \n\x00")
	rest, ok := bytes.CutPrefix(data, []byte(sealPrefix))
	if !ok {
		return data, true
	}
	if len(rest) < sumLen+1 || rest[sumLen] != '"' {
		return nil, false
	}
	want, err := hex.DecodeString(string(rest[:sumLen]))
	if err != nil {
		return nil, false
	}
	body := rest[sumLen+1:]
	body = bytes.TrimPrefix(body, []byte(","))
	doc := make([]byte, 0, len(body)+1)
	doc = append(append(doc, '{'), body...)
	sum := sha256.Sum256(doc)
	if !bytes.Equal(sum[:sumLen/2], want) {
		return nil, false
	}
	return doc, true
}

// readJSON reads the JSON state file at path into v. A sealed file whose
// sum does not match is read again (a rewrite may have been under way),
// then its previous version is tried (the swap partner replaceState
// keeps), before giving up with errTornState.
func readJSON(path string, v any) error {
	doc, err := readStateDoc(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(doc, v)
}

// readStateDoc is [readJSON] that returns the document's text.
func readStateDoc(path string) ([]byte, error) {
	for try := 0; ; try++ {
		p := path
		if try == 3 {
			p = nextStatePath(path)
		}
		data, err := readFile(p)
		if err != nil {
			if try == 3 {
				return nil, fmt.Errorf("%w: %s", errTornState, path)
			}
			return nil, err
		}
		if doc, ok := unsealState(data); ok {
			return doc, nil
		}
		if try == 3 {
			return nil, fmt.Errorf("%w: %s", errTornState, path)
		}
		if try > 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// nextStatePath is the swap partner of a state file: .NAME.next beside it.
func nextStatePath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".next")
}

// writeState replaces a machine-local state file, sealed, without fsync:
// state files are hints or witnesses whose loss in a crash costs a
// rescan, never an entry. The caller holds the lock that guards the file
// (the feed's for a hint, the witness lock for the witness), so there is
// one writer at a time.
func (l *Log) writeState(rel string, v any) error {
	doc, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", rel, err)
	}
	return l.writeStateDoc(rel, doc)
}

// writeStateDoc is [Log.writeState] of a document already encoded.
func (l *Log) writeStateDoc(rel string, doc []byte) error {
	var err error
	path := l.abs(rel)
	data := sealState(doc)
	err = replaceState(path, data)
	if errors.Is(err, fs.ErrNotExist) {
		if err = vault.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			err = replaceState(path, data)
		}
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// renameState replaces path with data by writing a new temporary file and
// renaming it over path: the portable way, and the fallback where files
// cannot be swapped. The temp file is named as every atomic write of
// Nexus names its own (".NAME.tmp-DIGITS"), so what a process killed
// between the write and the rename leaves is swept by the next writer of
// the folder (atomicfile.SweepStale) and reported by doctor. State files
// are not fsynced, by design (docs/livelog.md).
func renameState(path string, data []byte) error {
	dir := filepath.Dir(path)
	atomicfile.SweepStale(dir)
	f, err := vault.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o644) // as the state files were always written: others may read them
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = vault.Rename(tmp, path)
	}
	if err != nil {
		vault.Remove(tmp)
		return err
	}
	return nil
}

// fillState writes data over the start of f, padded with spaces to f's
// size when that wastes little (a shorter file needs a truncate, which
// costs more than the write), so that nothing of the old text is left.
func fillState(f *os.File, data []byte) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	buf := data
	if size > int64(len(data)) && size <= 2*int64(len(data))+4096 {
		buf = make([]byte, size)
		copy(buf, data[:len(data)-1])
		for i := len(data) - 1; i < len(buf)-1; i++ {
			buf[i] = ' '
		}
		buf[len(buf)-1] = '\n'
	}
	n, err := f.WriteAt(buf, 0)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("short write (%d of %d bytes)", n, len(buf))
	}
	if err == nil && size > int64(len(buf)) {
		err = f.Truncate(int64(len(buf)))
	}
	return err
}
