package index

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	bindex "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	zap "github.com/blevesearch/zapx/v17"

	"github.com/nexus-memory/nexus/vault"
)

// A rebuild writes its segments itself, on up to four cores, instead of
// through bleve's offline builder, which writes them one at a time under
// one lock and then merges them one group at a time: on two cores a
// profile had the builder's goroutine alone longer than the whole
// reading and analysis, and its final merge a fifth of the CPU on one
// core. segmentWriter writes and merges the same zap segments, with the
// same plugin bleve's builder uses, in parallel; the builder then only
// makes the index around the one merged segment (see [finishBuild]).
//
// That last step swaps a file inside the builder's private build folder,
// which is no API: a bleve release may lay it out differently. So it is
// taken only with the bleve release it was written against
// ([bleveBuilderVersion]: checked at run time from the binary's build
// information, and against go.mod by TestBleveVersionPinned, which fails
// on any bleve upgrade until someone has checked the builder again). With
// another release, or a build folder that does not look as expected, a
// rebuild goes through the builder's public API instead ([plainWriter]):
// the same index, written and merged by one goroutine.

// The bleve module, and the release whose offline builder
// (index/scorch/builder.go: one "scorch-offline-build*" folder under
// buildPathPrefix, one zap file per batch there, merged and renamed into
// store/ by Close) [finishBuild] was written against.
const (
	bleveModule         = "github.com/blevesearch/bleve/v2"
	bleveBuilderVersion = "v2.6.3"
)

// linkedVersion returns the version of the module at path linked into
// this binary, and false when the binary does not say (no build
// information). Tests override it.
var linkedVersion = linkedVersionOf

func linkedVersionOf(path string) (string, bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, d := range bi.Deps {
		if d.Path != path {
			continue
		}
		if d.Replace != nil {
			return d.Replace.Version + " (replaced by " + d.Replace.Path + ")", true
		}
		return d.Version, true
	}
	return "", false
}

// privateBuildRefusal says why the rebuild may not take the private step
// with the bleve linked in, or "" when it may. A binary that does not
// name its bleve is trusted: go.mod pins it (TestBleveVersionPinned).
func privateBuildRefusal() string {
	v, ok := linkedVersion(bleveModule)
	if !ok || v == bleveBuilderVersion {
		return ""
	}
	return fmt.Sprintf("bleve %s is linked in, but the fast rebuild was written against bleve %s's private build folder; rebuilding through bleve's public builder instead (slower)", v, bleveBuilderVersion)
}

// errBuilderLayout is wrapped by the error of a fast rebuild that found
// bleve's build folder laid out otherwise than it was written for.
var errBuilderLayout = errors.New("bleve's offline builder is not laid out as the fast rebuild expects")

// docWriter takes the analysed documents of a rebuild, batch by batch,
// and makes the index of them: [segmentWriter], or [plainWriter].
type docWriter interface {
	// write takes one batch, numbered seq; it may be called from
	// several goroutines at once.
	write(seq int, docs []*document.Document) error
	// finish makes the index of every batch written, with up to
	// workers goroutines.
	finish(ctx context.Context, workers int) error
}

// newDocWriter returns the writer of a rebuild into dir, its temporary
// files in tmp: a [segmentWriter], or a [plainWriter] when plain.
func newDocWriter(dir, tmp string, m preMapped, plain bool) (docWriter, error) {
	if !plain {
		return newSegmentWriter(dir, tmp, m)
	}
	if err := vault.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	b, err := bleve.NewBuilder(dir, m, map[string]any{"buildPathPrefix": tmp})
	if err != nil {
		return nil, fmt.Errorf("create index: %w", err)
	}
	return &plainWriter{b: b}, nil
}

// plainWriter gives the documents to bleve's offline builder through its
// public API, which writes and merges them under one lock.
type plainWriter struct{ b bleve.Builder }

func (w *plainWriter) write(_ int, docs []*document.Document) error {
	for _, d := range docs {
		if err := w.b.Index(d.ID(), d); err != nil {
			return fmt.Errorf("index %s: %w", d.ID(), err)
		}
	}
	return nil
}

func (w *plainWriter) finish(context.Context, int) error {
	if err := w.b.Close(); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	return nil
}

// maxMergeFanIn bounds the segments one merge takes. The segments are
// merged in the fewest levels it allows, every merge of a level taking
// about as many: each level copies every document once more, and one
// merge of many segments costs less than two of fewer (at 100k notes,
// about 1,000 segments: two levels of 32 or 33, where bleve's builder,
// ten at a time, takes three).
var maxMergeFanIn = 40

// fanIn is how many segments each merge takes to merge n in the fewest
// levels.
func fanIn(n int) int {
	most := max(maxMergeFanIn, 2)
	if n <= most {
		return n
	}
	levels := 1
	for p := most; p < n; p *= most {
		levels++
	}
	f := 2
	for pow(f, levels) < n {
		f++
	}
	return f
}

func pow(f, n int) int {
	p := 1
	for range n {
		p *= f
	}
	return p
}

// maxSegmentWriters bounds the batches written at once, each of which
// holds its documents' postings in memory while it is written.
const maxSegmentWriters = 4

// zapPlugin is the segment format written: bleve's default, which its
// builder records in the index (finishBuild checks they agree).
var zapPlugin = &zap.ZapPlugin{}

// segmentWriter writes batches of analysed documents as segment files in
// dir and merges them into one, of which it makes the index in index.
type segmentWriter struct {
	index, dir string
	m          preMapped

	mu    sync.Mutex
	next  int            // the next file name's number
	paths map[int]string // the segments written, by their batch's number
}

func newSegmentWriter(index, dir string, m preMapped) (*segmentWriter, error) {
	if err := vault.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &segmentWriter{index: index, dir: dir, m: m, paths: map[int]string{}}, nil
}

// finish merges the segments written and makes the index around them.
func (w *segmentWriter) finish(ctx context.Context, workers int) error {
	seg, err := w.merge(ctx, workers)
	if err != nil {
		return err
	}
	return finishBuild(w.index, w.dir, seg, w.m)
}

// name returns a new file name in w.dir.
func (w *segmentWriter) name() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.next
	w.next++
	return filepath.Join(w.dir, fmt.Sprintf("%012x.zap", n))
}

// write writes docs, analysed by [analyseDocs], as one segment: the
// documents bleve's builder would make of them (its id field added,
// every field analysed), numbered seq.
func (w *segmentWriter) write(seq int, docs []*document.Document) error {
	results := make([]bindex.Document, 0, len(docs))
	for _, d := range docs {
		doc := document.NewDocument(d.ID())
		if err := w.m.MapDocument(doc, d); err != nil {
			return fmt.Errorf("index %s: %w", d.ID(), err)
		}
		doc.AddIDField()
		if doc.HasComposite() {
			return fmt.Errorf("index %s: a composite field is not written here", d.ID())
		}
		doc.VisitFields(func(f bindex.Field) {
			if f.Options().IsIndexed() {
				f.Analyze()
			}
		})
		results = append(results, doc)
	}
	path, err := w.persist(results)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.paths[seq] = path
	w.mu.Unlock()
	return nil
}

// persist writes docs as a new segment file and returns its path.
func (w *segmentWriter) persist(docs []bindex.Document) (string, error) {
	seg, _, err := zapPlugin.New(docs)
	if err != nil {
		return "", fmt.Errorf("write segment: %w", err)
	}
	defer seg.Close()
	path := w.name()
	if err := seg.(segment.UnpersistedSegment).Persist(path); err != nil {
		return "", fmt.Errorf("write segment: %w", err)
	}
	return path, nil
}

// merge merges every segment written, in the order of their batches,
// level by level (see [maxMergeFanIn]), workers merges at a time, into
// one segment file and returns its path. With none written it writes an
// empty segment.
func (w *segmentWriter) merge(ctx context.Context, workers int) (string, error) {
	level := make([]string, 0, len(w.paths))
	for _, seq := range slices.Sorted(maps.Keys(w.paths)) {
		level = append(level, w.paths[seq])
	}
	if len(level) == 0 {
		return w.persist(nil)
	}
	cancel := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(cancel) })
	defer stop()
	for len(level) > 1 {
		f := fanIn(len(level))
		groups := split(level, (len(level)+f-1)/f)
		out := make([]string, len(groups))
		errs := make([]error, len(groups))
		sem := make(chan struct{}, max(workers, 1))
		var wg sync.WaitGroup
		for i, g := range groups {
			if len(g) == 1 {
				out[i] = g[0]
				continue
			}
			out[i] = w.name()
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				errs[i] = mergeFiles(g, out[i], cancel)
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", err
		}
		level = out
	}
	return level[0], nil
}

// split cuts paths into n runs of as equal lengths as may be, in order.
func split(paths []string, n int) [][]string {
	out := make([][]string, 0, n)
	for i := range n {
		out = append(out, paths[i*len(paths)/n:(i+1)*len(paths)/n])
	}
	return out
}

// mergeFiles merges the segment files in into the file out, and removes
// them.
func mergeFiles(in []string, out string, cancel chan struct{}) error {
	segs := make([]segment.Segment, 0, len(in))
	err := func() error {
		for _, p := range in {
			s, err := zapPlugin.Open(p)
			if err != nil {
				return fmt.Errorf("open segment for merge: %w", err)
			}
			segs = append(segs, s)
		}
		if _, _, err := zapPlugin.Merge(segs, make([]*roaring.Bitmap, len(segs)), out, cancel, nil); err != nil {
			return fmt.Errorf("merge segments: %w", err)
		}
		return nil
	}()
	for _, s := range segs {
		s.Close() // before they are removed: Windows removes no open file
	}
	if err != nil {
		return err
	}
	for _, p := range in {
		if err := vault.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// builderFolder is the name bleve's offline builder gives its build
// folder (a pattern; tests change it to see a layout they do not know).
var builderFolder = "scorch-offline-build*"

// placeholderID is the one document bleve's builder is given by
// finishBuild; it never reaches the index.
const placeholderID = "\x00nexus-placeholder"

// finishBuild makes the index in dir around the merged segment file seg,
// with bleve's offline builder (which writes the index's metadata, its
// mapping and the snapshot naming the segment): the builder is given one
// placeholder document, whose segment file, the only one in its build
// folder tmp, is replaced by seg before the builder closes and takes
// that file as its result. It fails, leaving the index unfinished, if
// the builder does not work that way or writes another segment format:
// then the error wraps errBuilderLayout, and the rebuild starts over
// through the public builder.
func finishBuild(dir, tmp, seg string, m preMapped) error {
	b, err := bleve.NewBuilder(dir, m, map[string]any{
		"batchSize":       1,
		"buildPathPrefix": tmp,
	})
	if err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	if err := b.Index(placeholderID, document.NewDocument(placeholderID)); err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(tmp, builderFolder, "*.zap"))
	if err != nil || len(files) != 1 {
		return fmt.Errorf("create index: %w (bleve %s: %d segment files in its build folder, not 1)", errBuilderLayout, bleveBuilderVersion, len(files))
	}
	s, err := zapPlugin.Open(files[0])
	if err != nil {
		return fmt.Errorf("create index: %w (bleve %s writes another segment format: %v)", errBuilderLayout, bleveBuilderVersion, err)
	}
	s.Close()
	if err := vault.Rename(seg, files[0]); err != nil {
		return fmt.Errorf("create index: %w", err)
	}
	if err := b.Close(); err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	return nil
}
