package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/index/markdown"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// The log is append-only, so a log file is indexed incrementally: the
// manifest keeps, for each one, where its last block starts (LogOff, the
// byte offset, and LogLine, its line) and a CRC-32C of every byte before
// it (LogCRC). When the file changes and still begins with exactly those
// bytes, only the last block and what follows it are read and indexed (the
// last block again, because an append may have completed it: a torn
// record, a person's paragraph). Otherwise (the file shrank, or a byte
// before the offset changed) it is indexed whole. Checking the prefix
// reads it through a small buffer: that is the only work that grows with
// the file, and it needs no memory that does.

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// crcBufSize is the read size of the prefix check.
const crcBufSize = 64 << 10

// prefixCRC is the CRC-32C of the first n bytes of f.
func prefixCRC(f *os.File, n int64) (uint32, error) {
	buf := make([]byte, min(n, crcBufSize))
	var crc uint32
	var off int64
	for off < n {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-off)], off)
		crc = crc32.Update(crc, crcTable, buf[:k])
		off += int64(k)
		if err != nil && off < n {
			if errors.Is(err, io.EOF) {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
	}
	return crc, nil
}

// loadLog reads and parses one log file, only from its last indexed block
// on when the bytes before it are unchanged (f.prev). The result's from is
// the byte offset it started at: 0 means the whole file, so every old
// document of the file must go.
func (ix *Index) loadLog(ctx context.Context, f diskFile) parsed {
	abs := filepath.Join(ix.v.Root(), filepath.FromSlash(f.disk))
	for attempt := 0; ; attempt++ {
		fh, err := vault.OpenRead(abs)
		if err != nil {
			return parsed{f: f, skip: true}
		}
		p, retry := ix.readLog(ctx, f, fh)
		fh.Close()
		if retry && attempt < 5 {
			time.Sleep(ix.opts.Debounce / 4)
			continue
		}
		return p
	}
}

// A log of a million entries takes seconds: it stops with ctx's error
// in p.err when ctx is done.
func (ix *Index) readLog(ctx context.Context, f diskFile, fh *os.File) (p parsed, retry bool) {
	st1, err := fh.Stat()
	if err != nil || !st1.Mode().IsRegular() {
		return parsed{f: f, skip: true}, false
	}
	from, line, crc := int64(0), 1, uint32(0)
	if prev := f.prev; prev != nil && prev.LogLine > 0 && prev.LogOff > 0 && st1.Size() >= prev.LogOff {
		if c, err := prefixCRC(fh, prev.LogOff); err == nil && c == prev.LogCRC {
			from, line, crc = prev.LogOff, prev.LogLine, c
		}
	}
	if st1.Size()-from > ix.opts.MaxFileBytes {
		f.st = fileState{Size: st1.Size(), Mtime: st1.ModTime().UnixNano(), Ctime: ctimeOf(st1), Disk: f.diskPath()}
		return parsed{f: f, warns: []string{fmt.Sprintf("%d bytes to index, more than %d; not indexed", st1.Size()-from, ix.opts.MaxFileBytes)}}, false
	}
	tail := make([]byte, st1.Size()-from)
	k, err := fh.ReadAt(tail, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return parsed{f: f, skip: true}, false
	}
	st2, err := vault.Lstat(fh.Name())
	if err != nil {
		return parsed{f: f, skip: true}, false
	}
	if k != len(tail) || st2.Size() != st1.Size() || !st2.ModTime().Equal(st1.ModTime()) {
		return parsed{f: f, skip: true}, true
	}
	f.st = fileState{Size: st2.Size(), Mtime: st2.ModTime().UnixNano(), Ctime: ctimeOf(st2)}
	if f.disk != f.key {
		f.st.Disk = f.disk
	}
	head := tail[:min(len(tail), 8000)]
	if bytes.IndexByte(head, 0) >= 0 {
		return parsed{f: f, from: from, warns: []string{"binary content, not indexed"}}, false
	}
	ix.logParsed.Add(int64(len(tail)))
	entries := livelog.ParseFeed(f.key, tail)
	docs := make([]doc, 0, len(entries))
	var warns []string
	for i := range entries {
		if i%1024 == 1023 && ctx.Err() != nil {
			return parsed{f: f, err: ctx.Err()}, false
		}
		e := &entries[i]
		n := markdown.Parse(f.key, tail[e.Offset:e.End])
		for _, w := range n.Warnings {
			warns = append(warns, fmt.Sprintf("line %d: %s", line-1+e.Line, w))
		}
		docs = append(docs, logDocs(f.key, f.disk, e, n, line-1, st2.ModTime())...)
	}
	f.st.LogOff, f.st.LogLine, f.st.LogCRC = from, line, crc
	if len(entries) > 0 {
		last := entries[len(entries)-1]
		f.st.LogOff = from + last.Offset
		f.st.LogLine = line - 1 + last.Line
		f.st.LogCRC = crc32.Update(crc, crcTable, tail[:last.Offset])
	}
	return parsed{f: f, docs: docs, from: from, warns: warns}, false
}

// logDocs are the documents of one block of a log file: one for a signed
// entry or decision; for text a person wrote there, one per section of
// heading level 1-3, as for a long note. n is the block parsed as
// markdown; shift is the line of the bytes it was parsed from, less one.
func logDocs(rel, disk string, e *livelog.Entry, n *markdown.Note, shift int, mtime time.Time) []doc {
	kind := logKind(rel)
	props, kv := propFields(n.Props)
	tags := foldKeys(n.Tags)
	base := doc{
		Path:    rel,
		Props:   props,
		PropKV:  kv,
		Title:   n.Title,
		Tags:    tags,
		TagText: strings.Join(tags, " "),
		Kind:    kind,
		Type:    kind,
		Date:    mtime.UTC(),
	}
	if disk != rel {
		base.Disk = disk
	}
	at := shift + e.Line - 1 // a line of the block is at+line in the file
	groups := [][]markdown.Section{n.Sections}
	if e.Time.IsZero() {
		groups = group(n.Sections, 3)
	}
	docs := make([]doc, 0, len(groups))
	for i, g := range groups {
		d := base
		d.Line, d.End = at+1, at+1
		if i > 0 {
			d.Line = at + g[0].Line
		}
		var heads, body []string
		for _, s := range g {
			if s.Heading != "" {
				heads = append(heads, s.Heading)
				if d.Heading == "" {
					d.Heading = s.Heading
				}
			}
			if s.Text != "" {
				body = append(body, s.Text)
			}
			d.End = max(d.End, at+s.EndLine)
		}
		d.Headings = strings.Join(heads, "\n")
		d.Body = strings.Join(body, "\n")
		d.All = strings.Join([]string{d.Title, d.TagText, d.Props, d.Headings, d.Body}, "\n")
		if !e.Time.IsZero() {
			// livelog's header: TIME AGENT [CHANNEL/KIND] SUMMARY.
			d.Date = e.Time.UTC()
			d.Agent = foldKey(e.Agent)
			if e.Summary != "" {
				d.Title = e.Summary
			}
		} else {
			// Text a person wrote: its own time and agent when it names
			// them.
			head := d.Heading + "\n" + firstLines(d.Body, 6)
			if ts := rfc3339Re.FindString(head); ts != "" {
				if t, err := time.Parse(time.RFC3339, ts); err == nil {
					d.Date = t.UTC()
				}
			}
			if m := agentRe.FindStringSubmatch(head); m != nil {
				d.Agent = foldKey(m[1])
			}
		}
		docs = append(docs, d)
	}
	return docs
}
