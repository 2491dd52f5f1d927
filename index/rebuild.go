package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/vault"
)

// Progress reports how far a rebuild is: see [holder.Progress].
type Progress = holder.Progress

// A rebuild writes the new index beside the live one and swaps it in:
//
//  1. build into bleve.new (each batch of documents becomes one segment
//     file, written on up to four cores; they are merged into one, which
//     bleve's offline builder makes the index of: see [segmentWriter]);
//  2. with the open lock held, write the new manifest as manifest.new;
//     its existence says bleve.new is complete;
//  3. close the live index, rename bleve to bleve.old and bleve.new to
//     bleve, then manifest.new to manifest, and remove bleve.old.
//
// A process killed before step 2 leaves the old index and manifest as
// they were; bleve.new is removed by the next holder. Killed after it,
// the next process to open the index finishes step 3 (see
// [finishSwap]) before opening it.
const (
	newSubdir       = bleveSubdir + ".new"
	oldSubdir       = bleveSubdir + ".old"
	newManifestFile = manifestFile + ".new"
)

// rebuildStep, when not nil, is called at each step of a rebuild (tests
// kill the process there).
var rebuildStep func(step string)

func step(name string) {
	if rebuildStep != nil {
		rebuildStep(name)
	}
}

// Rebuild recreates the index from the markdown alone. Searches keep
// answering from the old index until the new one is complete.
func (ix *Index) Rebuild(ctx context.Context, progress func(Progress)) error {
	if ix.isClosed() {
		return ErrClosed
	}
	if _, remote, err := viaHolder(ctx, ix, func(c *client) (struct{}, error) {
		return struct{}{}, c.rebuild(ctx, progress)
	}); remote {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.ro != roNone {
		return ErrReadOnly
	}
	ix.rebuilding.Store(true)
	defer ix.rebuilding.Store(false)
	newDir := filepath.Join(ix.dir, newSubdir)
	if err := vault.RemoveAll(newDir); err != nil {
		return fmt.Errorf("remove an unfinished rebuild: %w", err)
	}
	files, err := ix.walk(ctx)
	if err != nil {
		return fmt.Errorf("scan vault: %w", err)
	}
	kept := files.byKey()
	list := make([]diskFile, 0, len(files.list))
	for _, f := range kept {
		list = append(list, f)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].key < list[j].key })
	oldMan, oldWarn := ix.man, ix.fwarn
	ix.man = newManifest()
	ix.fwarn, ix.fwarnDirty = nil, true
	plain := false // through bleve's public builder (see segments.go)
	if why := privateBuildRefusal(); why != "" {
		ix.warn(why)
		plain = true
	}
	err = ix.build(ctx, newDir, list, progress, plain)
	if errors.Is(err, errBuilderLayout) {
		ix.warn(err.Error() + "; rebuilding through bleve's public builder instead (slower)")
		vault.RemoveAll(newDir)
		ix.man = newManifest()
		ix.fwarn, ix.fwarnDirty = nil, true
		err = ix.build(ctx, newDir, list, progress, true)
	}
	if err != nil {
		vault.RemoveAll(newDir)
		ix.man, ix.fwarn = oldMan, oldWarn
		return err
	}
	ix.warnShadowed(files, kept)
	ix.man.LastUpdate = ix.opts.Now().UTC()
	step("built")
	if err := ix.swapIn(); err != nil {
		return err
	}
	ix.partial.Store(false) // every file is in
	ix.bump()
	if progress != nil {
		progress(Progress{Done: len(list), Total: len(list)})
	}
	return ix.saveManifest() // the warnings
}

// build indexes list into a new index in dir, filling ix.man and the
// files' warnings. ix.mu must be held.
//
// Every core reads, parses and analyses files, and up to four write the
// analysed documents in batches as segment files, which are then merged into one
// (see [segmentWriter]); bleve's offline builder makes the index around
// it (see [finishBuild]).
func (ix *Index) build(ctx context.Context, dir string, list []diskFile, progress func(Progress), plain bool) error {
	m, err := newMapping()
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "build") // removed with dir when the build fails
	w, err := newDocWriter(dir, tmp, preMapped{m}, plain)
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	total := len(list)
	if progress != nil {
		progress(Progress{Done: 0, Total: total})
	}
	// Batches of analysed documents are written as segments on up to
	// four cores while the next are read and analysed.
	workers := min(runtime.GOMAXPROCS(0), ix.opts.Workers, maxSegmentWriters)
	type batch struct {
		seq  int
		docs []*document.Document
	}
	feed := make(chan batch)
	fed := make(chan error, workers)
	var failed atomic.Bool // a segment could not be written: stop feeding
	for range workers {
		go func() {
			var err error
			for b := range feed {
				if err == nil {
					if err = w.write(b.seq, b.docs); err != nil {
						failed.Store(true)
					}
				}
			}
			fed <- err
		}()
	}
	var firstErr error
	done, seq := 0, 0
	var pending []*document.Document
	send := func() {
		feed <- batch{seq, pending}
		seq++
		pending = nil
	}
	for p := range ix.loadAll(ctx, list, func(p *parsed) { analyseDocs(ctx, m, p) }, nil) {
		if firstErr != nil || failed.Load() {
			continue // drain
		}
		if p.err != nil {
			firstErr = p.err
			continue
		}
		ix.fileWarnings(p.f.key, p.warns, false)
		done++
		if !p.skip {
			pending = append(pending, p.analysed...)
			ix.man.docs += len(p.analysed)
			if len(pending) >= ix.buildBatchDocs() {
				send()
			}
			ix.man.set(p.f.key, p.f.st)
		}
		// The last step is the merge: Done reaches Total when the index
		// is complete.
		if progress != nil && done%500 == 0 && done < total {
			progress(Progress{Done: done, Total: total})
		}
		if done == total/2 {
			step("building")
		}
	}
	if firstErr == nil && !failed.Load() && len(pending) > 0 {
		send()
	}
	close(feed)
	for range workers {
		if err := <-fed; firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = ctx.Err()
	}
	if firstErr != nil {
		return firstErr // nothing is open: dir is removed
	}
	if progress != nil {
		progress(Progress{Done: done, Total: total, Merging: true}) // the merge is left
	}
	step("merging")
	if err := w.finish(ctx, workers); err != nil {
		return err
	}
	if err := vault.RemoveAll(tmp); err != nil {
		return err
	}
	// bleve writes its index_meta.json without syncing it (the segment
	// and root.bolt are synced as they are written).
	if err := syncFile(filepath.Join(dir, "index_meta.json")); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(filepath.Join(dir, "store")); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return err
	}
	ix.dirty = true
	return nil
}

// analyseDocs maps and analyses p's documents as bleve would when
// indexing them, into p.analysed (or sets p.err). The builder may not be
// given one id twice: a later document of the same id replaces an
// earlier one, as in a batch. It stops with ctx's error in p.err when ctx
// is done (a log file is tens of thousands of documents: seconds).
func analyseDocs(ctx context.Context, m mapping.IndexMapping, p *parsed) {
	if p.skip {
		return
	}
	last := make(map[string]int, len(p.docs))
	for i := range p.docs {
		last[p.docs[i].id()] = i
	}
	p.analysed = make([]*document.Document, 0, len(last))
	for i := range p.docs {
		if i%256 == 255 && ctx.Err() != nil {
			p.err = ctx.Err()
			return
		}
		id := p.docs[i].id()
		if last[id] != i {
			continue
		}
		d, err := mapDoc(m, &p.docs[i])
		if err != nil {
			p.err = fmt.Errorf("index %s: %w", p.f.key, err)
			return
		}
		analyseFields(m, &p.docs[i], d)
		for _, f := range d.Fields {
			if pc, ok := f.(*precomputed); ok {
				pc.dropText()
			}
		}
		p.analysed = append(p.analysed, d)
	}
	p.docs = nil
}

// allParts are the fields whose values, joined by newlines, make the
// "all" field (see buildDocs), in that order; a note that is all
// frontmatter has only the first four.
var allParts = [...]string{"title", "aliases", "tagtext", "props", "headings", "body"}

// analyseFields analyses the fields of d, mapped from src, as
// [document.TextField.Analyze] does, but for the "all" field without
// analysing its text again: "all" is its parts' text joined by newlines,
// and a newline ends every token (no word, Hangul pair across spaces or
// CJK bigram spans one), so its terms are those of its parts: those of
// the parts' own fields, the body's without its word pairs. When src's
// "all" is not made that way or is not valid UTF-8, or a field is not
// analysed as assumed, every field is analysed as usual. Otherwise the
// parts are analysed by a [textAnalysis], which makes the same terms with
// less work.
func analyseFields(m mapping.IndexMapping, src *doc, d *document.Document) {
	words, body := m.AnalyzerNamed(analyzerName), m.AnalyzerNamed(bodyAnalyzerName)
	// The body part is the longbody field when the body is too long for
	// word pairs (see maxPairedBody); one of the two is empty.
	bodyField := "body"
	if src.LongBody != "" {
		bodyField = "longbody"
	}
	values := [...]string{src.Title, src.Aliases, src.TagText, src.Props, src.Headings, src.Body + src.LongBody}
	n := len(values)
	if !utf8.ValidString(src.All) || src.Body != "" && src.LongBody != "" {
		// A stray byte may swallow the newline after it.
		n = 0
	} else if src.All != strings.Join(values[:], "\n") {
		n = 4
		if src.Headings != "" || values[5] != "" || src.All != strings.Join(values[:4], "\n") {
			n = 0
		}
	}
	all := -1
	var part [len(allParts)]int
	for i := range part {
		part[i] = -1
	}
	for i, f := range d.Fields {
		tf, ok := f.(*document.TextField)
		if !ok {
			continue
		}
		if f.Name() == "all" {
			if all >= 0 || f.Options().IncludeTermVectors() || tf.Analyzer() != words || string(tf.Value()) != src.All {
				n = 0
			}
			all = i
			continue
		}
		for j, name := range allParts {
			if name == "body" {
				name = bodyField
			}
			if f.Name() != name {
				continue
			}
			want := words
			if name == "body" {
				want = body
			}
			if part[j] >= 0 || tf.Analyzer() != want || string(tf.Value()) != values[j] {
				n = 0
			}
			part[j] = i
		}
	}
	if all < 0 {
		n = 0
	}
	var ta *textAnalysis
	if n > 0 {
		if ta = getTextAnalysis(words, body); ta != nil {
			defer ta.put()
		}
	}
	// The "all" field's terms: counted part by part with a textAnalysis
	// (it has no term vectors: only the counts matter), else its parts'
	// tokens, counted at the end.
	var allTokens analysis.TokenStream
	var allFreqs bindex.TokenFrequencies
	allLen, allCounted := 0, false
	if n > 0 && ta != nil {
		allFreqs = bindex.TokenFrequencies{}
		allCounted = !d.Fields[all].Options().SkipFreqNorm()
	}
	for i, f := range d.Fields {
		if !f.Options().IsIndexed() {
			continue
		}
		if i == all && n > 0 {
			continue
		}
		j := slices.Index(part[:], i)
		if n == 0 || j < 0 {
			f.Analyze()
			continue
		}
		tf := f.(*document.TextField)
		inBody := allParts[j] == "body" && bodyField == "body" // the body with its word pairs
		var tokens analysis.TokenStream                        // without the body's word pairs
		switch {
		case ta != nil && !inBody && !tf.Options().IncludeTermVectors() && len(tf.Value()) > analysisChunk:
			// A long text (a pasted log in longbody) is analysed a
			// piece at a time, its tokens counted and dropped: whole,
			// its token stream alone took about 100 bytes a word. The
			// pieces end where every token does (see [nextCut]), and
			// without term vectors only the counts matter, so the
			// terms are the same.
			freqs, length := bindex.TokenFrequencies{}, 0
			counted := !tf.Options().SkipFreqNorm()
			text := analysisInput(tf)
			for len(text) > 0 {
				cut := nextCut(text, analysisChunk)
				piece := ta.tokens(text[:cut])
				ta.count(freqs, piece, counted)
				length += len(piece)
				if j < n {
					ta.count(allFreqs, piece, allCounted)
					allLen += len(piece)
				}
				text = text[cut:]
			}
			d.Fields[i] = &precomputed{Field: tf, length: length, freqs: freqs}
			continue
		case ta != nil && inBody && !tf.Options().IncludeTermVectors():
			tokens = ta.tokens(analysisInput(tf))
			freqs, length := ta.bodyFreqs(tokens, tf.Options())
			d.Fields[i] = &precomputed{Field: tf, length: length, freqs: freqs}
		case ta != nil && !inBody:
			tokens = ta.tokens(analysisInput(tf))
			d.Fields[i] = &precomputed{Field: tf, length: len(tokens), freqs: ta.freqs(tokens, tf.ArrayPositions(), tf.Options())}
		default:
			tokens = tf.Analyzer().Analyze(analysisInput(tf))
			d.Fields[i] = &precomputed{Field: tf, length: len(tokens), freqs: analysis.TokenFrequency(tokens, tf.ArrayPositions(), tf.Options())}
			if inBody {
				tokens = slices.DeleteFunc(slices.Clone(tokens), func(t *analysis.Token) bool { return t.Type == analysis.Shingle })
			}
		}
		if j < n {
			if ta != nil {
				ta.count(allFreqs, tokens, allCounted)
				allLen += len(tokens)
			} else {
				allTokens = append(allTokens, tokens...)
			}
		}
	}
	if n > 0 {
		// Without term vectors only the terms count, not their order.
		af := d.Fields[all]
		if ta == nil {
			allFreqs = analysis.TokenFrequency(allTokens, af.ArrayPositions(), af.Options())
			allLen = len(allTokens)
		}
		d.Fields[all] = &precomputed{Field: af, length: allLen, freqs: allFreqs}
	}
}

// analysisInput is the text [document.TextField.Analyze] analyses of tf.
func analysisInput(tf *document.TextField) []byte {
	if tf.Options().IsStored() {
		// The filters change terms in place: keep the stored value.
		return bytes.Clone(tf.Value())
	}
	return tf.Value()
}

// precomputed is a field with its analysis done elsewhere.
type precomputed struct {
	document.Field
	length int
	freqs  bindex.TokenFrequencies
	plain  uint64 // the text's length, once dropped (see dropText)
}

// dropText lets go of the field's text when it is not stored: the index
// keeps only its terms, and the text of a pasted log is megabytes, held
// until its batch is written (twice: the body and "all").
func (f *precomputed) dropText() {
	tf, ok := f.Field.(*document.TextField)
	if !ok || tf.Options().IsStored() || len(tf.Value()) == 0 {
		return
	}
	f.plain = tf.NumPlainTextBytes()
	f.Field = document.NewTextFieldCustom(tf.Name(), tf.ArrayPositions(), nil, tf.Options(), tf.Analyzer())
}

// NumPlainTextBytes is the field's text's length, also once it is dropped.
func (f *precomputed) NumPlainTextBytes() uint64 {
	if f.plain > 0 {
		return f.plain
	}
	return f.Field.NumPlainTextBytes()
}

func (*precomputed) Analyze()                                            {}
func (f *precomputed) AnalyzedLength() int                               { return f.length }
func (f *precomputed) AnalyzedTokenFrequencies() bindex.TokenFrequencies { return f.freqs }

// preMapped is the index's mapping for bleve's builder, given documents
// [analyseDocs] mapped and analysed: it copies their fields, which the
// builder's own analysis then leaves as they are. Everything else
// (validation, the mapping stored in the index) is the mapping's.
type preMapped struct{ *mapping.IndexMappingImpl }

func (pm preMapped) MapDocument(doc *document.Document, data any) error {
	src, ok := data.(*document.Document)
	if !ok {
		return pm.IndexMappingImpl.MapDocument(doc, data)
	}
	for _, f := range src.Fields {
		doc.AddField(analysed{f})
	}
	doc.StoredFieldsSize = src.StoredFieldsSize
	return nil
}

// analysed is a field whose analysis is done.
type analysed struct{ document.Field }

func (analysed) Analyze() {}

// swapIn replaces the live index with the one built in bleve.new and
// ix.man's manifest, and reopens it. ix.mu must be held.
func (ix *Index) swapIn() error {
	unlock, err := ix.v.Lock("search-index-open") // no other process may open it mid-swap
	if err != nil {
		return fmt.Errorf("swap index: %w", err)
	}
	defer unlock()
	ix.files()
	if err := vault.WriteFile(filepath.Join(ix.dir, newManifestFile), encodeManifest(ix.man), 0o644); err != nil {
		return fmt.Errorf("swap index: %w", err)
	}
	step("manifest written")
	ix.bmu.Lock()
	defer ix.bmu.Unlock()
	if ix.bi != nil {
		ix.bi.Close()
		ix.bi = nil
	}
	if err := finishSwap(ix.dir); err != nil {
		return err
	}
	bi, err := openBleve(filepath.Join(ix.dir, bleveSubdir), map[string]any{"bolt_timeout": ix.opts.OpenTimeout.String()})
	if err != nil {
		return fmt.Errorf("reopen index: %w", err)
	}
	ix.bi = bi
	ix.dirty = false
	return nil
}

// finishSwap completes a swap whose manifest.new was written: it puts
// bleve.new in place of bleve (if not done yet) and manifest.new in place
// of manifest, then removes the old index. It does nothing when there is
// no manifest.new. Each step can be repeated, so a swap cut off at any
// point is finished by calling it again. The open lock must be held and
// nobody may hold the index open.
func finishSwap(dir string) error {
	newMan := filepath.Join(dir, newManifestFile)
	if _, err := vault.Lstat(newMan); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("swap index: %w", err)
	}
	bdir := filepath.Join(dir, bleveSubdir)
	newDir := filepath.Join(dir, newSubdir)
	oldDir := filepath.Join(dir, oldSubdir)
	if _, err := vault.Lstat(newDir); err == nil {
		if _, err := vault.Lstat(bdir); err == nil {
			if err := vault.RemoveAll(oldDir); err != nil {
				return fmt.Errorf("swap index: %w", err)
			}
			if err := vault.Rename(bdir, oldDir); err != nil {
				return fmt.Errorf("swap index: %w", err)
			}
			step("old index moved")
		}
		if err := vault.Rename(newDir, bdir); err != nil {
			return fmt.Errorf("swap index: %w", err)
		}
		if err := atomicfile.SyncDir(dir); err != nil {
			return fmt.Errorf("swap index: %w", err)
		}
		step("new index moved")
	}
	if err := vault.Rename(newMan, filepath.Join(dir, manifestFile)); err != nil {
		return fmt.Errorf("swap index: %w", err)
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("swap index: %w", err)
	}
	step("manifest moved")
	return vault.RemoveAll(oldDir)
}

// removeLeftovers removes what a rebuild cut off before its swap left:
// an unfinished bleve.new and a bleve.old. Only the index's holder may
// call it (another process's rebuild may be writing bleve.new).
func removeLeftovers(dir string) {
	vault.RemoveAll(filepath.Join(dir, newSubdir))
	vault.RemoveAll(filepath.Join(dir, oldSubdir))
}

// syncFile flushes the file at path to disk (opened for writing: Windows
// flushes only such handles).
func syncFile(path string) error {
	f, err := vault.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
