package embed

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	bits64 "math/bits"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/vault"
)

// StoreFile is the store's file in the index folder (.nexus/index/).
const StoreFile = "embeddings.nxv"

// The file: magic, a little-endian uint32 length and that much JSON
// header ({"model", "dims"}), then fixed-size records, each a CRC-32C of
// the rest of the record, the SHA-256 of the text, the float32 factor
// and dims int8 components. Records are only ever appended (and fsynced)
// after the header; a crash can leave a torn last record, which a reader
// ignores and the next writer cuts off. A new model, or compaction,
// replaces the whole file atomically.
var magic = []byte("NXVEC\x00\x01\n")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type storeHeader struct {
	Model string `json:"model"`
	Dims  int    `json:"dims"`
}

// Key is the SHA-256 of a section's text, which its vector is stored by.
type Key [32]byte

// KeyOf is the key of text.
func KeyOf(text string) Key { return sha256.Sum256([]byte(text)) }

// Section is a piece of a note to embed: where it is, and its text.
type Section struct {
	Path string // the note's path, as the index has it
	Line int    // 1-based line where the section starts
	Text string
}

// Hit is a section and its cosine similarity to a query, in [-1, 1].
type Hit struct {
	Section
	Score float32
}

// Store is the vector store: vectors of one model by the key of their
// text, in .nexus/index/embeddings.nxv, and the sections last given to
// [Store.Sync], which [Store.Search] ranks.
//
// Methods are safe for concurrent use; Search runs alongside other
// Searches and waits for a Sync's writes only at their end. Across
// processes, Sync takes the vault's "embed" lock (when the store was
// opened with [OpenStore]) and first reads what others appended.
type Store struct {
	path string
	lock func(context.Context) (func(), error) // nil: only syncMu serialises writers

	syncMu sync.Mutex // serialises Syncs of this Store (held before lock and mu)

	mu     sync.RWMutex // protects everything below
	model  string       // "" until the first vector or a read header
	dims   int
	keys   []Key
	factor []float32
	data   []int8 // row r is data[r*dims:(r+1)*dims]
	byKey  map[Key]int32
	end    int64 // file offset after the last good record; 0: no file
	seen   fileStamp
	torn   int64 // bytes of a torn tail ignored at the last read

	bitsMu sync.Mutex // protects bits against concurrent Searches (which hold mu.RLock)
	bits   []uint64   // sign bits of rows [0, len(bits)/words), made by the first big Search; nil when rows change otherwise than by appending

	sections []Section
	live     []int32 // distinct rows of sections, ascending
	first    []int32 // first[i]: first section of row live[i]
	next     []int32 // next[s]: next section with s's row, or -1
	secKeys  []Key   // secKeys[s]: the key of sections[s]
}

type fileStamp struct {
	size int64
	mod  time.Time
}

// OpenStore opens the vault's vector store, .nexus/index/embeddings.nxv,
// reading what it holds (an absent file is an empty store).
func OpenStore(v *vault.Vault) (*Store, error) {
	s, err := OpenStoreAt(filepath.Join(v.MustPath(vault.IndexDir), StoreFile))
	if err != nil {
		return nil, err
	}
	s.lock = func(ctx context.Context) (func(), error) { return v.LockContext(ctx, "embed") }
	return s, nil
}

// OpenStoreAt opens the store in file path with no cross-process lock:
// Syncs of the returned Store are serialised, but the caller makes sure
// one process writes at a time.
func OpenStoreAt(path string) (*Store, error) {
	s := &Store{path: path}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load (re)reads the file into memory; s.mu is held or s is not shared.
// A file with a bad header is an empty store (rewritten at the next
// write); a torn tail is ignored.
func (s *Store) load() error {
	// Rows are renumbered: until the sections are matched to them again,
	// none is live (a failed read leaves none, never stale row numbers).
	s.live, s.first = nil, nil
	err := s.read()
	if s.sections != nil {
		s.setSectionsLocked(s.sections, s.secKeys)
	}
	return err
}

// read is load's reading of the file.
func (s *Store) read() error {
	s.model, s.dims, s.end, s.torn = "", 0, 0, 0
	s.keys, s.factor, s.data, s.bits = nil, nil, nil, nil
	s.byKey = map[Key]int32{}
	f, err := vault.OpenRead(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		s.seen = fileStamp{}
		return nil
	}
	if err != nil {
		return fmt.Errorf("open vector store: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat vector store: %w", err)
	}
	s.seen = fileStamp{fi.Size(), fi.ModTime()}
	// The header is small; records are read one by one through a buffer,
	// so loading never holds the file twice.
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(len(magic) + 4 + 1<<16)
	h, at, ok := parseStoreHeader(head)
	if !ok {
		return nil // not ours or damaged: start afresh at the next write
	}
	if _, err := br.Discard(at); err != nil {
		return fmt.Errorf("read vector store: %w", err)
	}
	s.model, s.dims, s.end = h.Model, h.Dims, int64(at)
	rec := recordSize(h.Dims)
	n := int((fi.Size() - int64(at)) / int64(rec))
	s.keys = make([]Key, 0, n)
	s.factor = make([]float32, 0, n)
	s.data = make([]int8, n*h.Dims)
	r := make([]byte, rec)
	rows := 0
	for range n { // records appended since the Stat are read next time
		if _, err := io.ReadFull(br, r); err != nil {
			break // the end, or a torn tail
		}
		if binary.LittleEndian.Uint32(r) != crc32.Checksum(r[4:], castagnoli) {
			break
		}
		var k Key
		copy(k[:], r[4:36])
		if _, dup := s.byKey[k]; !dup {
			s.byKey[k] = int32(rows)
			s.keys = append(s.keys, k)
			s.factor = append(s.factor, math.Float32frombits(binary.LittleEndian.Uint32(r[36:40])))
			dst := s.data[rows*h.Dims : (rows+1)*h.Dims]
			for i, b := range r[40:] {
				dst[i] = int8(b)
			}
			rows++
		}
		s.end += int64(rec)
	}
	s.data = s.data[:rows*h.Dims]
	s.torn = fi.Size() - s.end
	return nil
}

func recordSize(dims int) int { return 4 + 32 + 4 + dims }

func parseStoreHeader(data []byte) (storeHeader, int, bool) {
	var h storeHeader
	if len(data) < len(magic)+4 || !bytes.Equal(data[:len(magic)], magic) {
		return h, 0, false
	}
	n := int(binary.LittleEndian.Uint32(data[len(magic):]))
	at := len(magic) + 4 + n
	if n > 1<<16 || at > len(data) {
		return h, 0, false
	}
	if json.Unmarshal(data[len(magic)+4:at], &h) != nil || h.Model == "" || h.Dims < 1 || h.Dims > 65536 {
		return h, 0, false
	}
	return h, at, true
}

func encodeStoreHeader(h storeHeader) []byte {
	js, _ := json.Marshal(h)
	out := append([]byte(nil), magic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	return append(out, js...)
}

func appendRecord(out []byte, k Key, factor float32, q []int8) []byte {
	start := len(out)
	out = append(out, 0, 0, 0, 0)
	out = append(out, k[:]...)
	out = binary.LittleEndian.AppendUint32(out, math.Float32bits(factor))
	for _, b := range q {
		out = append(out, byte(b))
	}
	binary.LittleEndian.PutUint32(out[start:], crc32.Checksum(out[start+4:], castagnoli))
	return out
}

// Status is what the store holds.
type Status struct {
	Path     string `json:"path"`  // the store's file
	Model    string `json:"model"` // the model its vectors are of ("": none yet)
	Dims     int    `json:"dims"`
	Vectors  int    `json:"vectors"`      // distinct texts with a vector, live or not
	Sections int    `json:"sections"`     // sections of the last Sync
	Embedded int    `json:"embedded"`     // of those, sections that have a vector
	Bytes    int64  `json:"bytes"`        // the file's size
	Memory   int64  `json:"memory_bytes"` // bytes the vectors take in memory (approximate)
	Torn     int64  `json:"torn_bytes"`   // bytes of a torn tail ignored when last read
}

// Status reports what the store holds.
func (s *Store) Status() Status {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Status{Path: s.path, Model: s.model, Dims: s.dims, Vectors: len(s.keys), Sections: len(s.sections), Bytes: s.end + s.torn, Torn: s.torn}
	for i := range s.live {
		for j := s.first[i]; j >= 0; j = s.next[j] {
			st.Embedded++
		}
	}
	st.Memory = int64(cap(s.data)) + int64(cap(s.keys))*32 + int64(cap(s.factor))*4 + int64(len(s.byKey))*48 +
		int64(cap(s.live)+cap(s.first)+cap(s.next))*4
	return st
}

// Cost is what a [Store.Sync] did and cost.
type Cost struct {
	Model    string        `json:"model"`
	Sections int           `json:"sections"`   // sections given
	Cached   int           `json:"cached"`     // sections whose text already had a vector (cache hits)
	Embedded int           `json:"embedded"`   // distinct texts embedded now
	Skipped  int           `json:"skipped"`    // texts not sent: the security scan refuses them
	Redacted int           `json:"redacted"`   // texts sent without a paragraph the scan refuses
	Chars    int64         `json:"chars"`      // characters of the texts embedded
	Tokens   int64         `json:"tokens"`     // tokens the provider counted (0 when it does not say)
	Requests int64         `json:"requests"`   // requests made to a remote endpoint
	Elapsed  time.Duration `json:"elapsed_ns"` // wall time of the Sync
	Reset    bool          `json:"reset"`      // the model changed: earlier vectors were dropped
}

// Progress is reported after each batch a Sync embeds.
type Progress struct {
	Done, Total int // texts embedded so far, of those to embed
	Cached      int // sections already embedded
}

// SyncOptions tune [Store.Sync].
type SyncOptions struct {
	// BatchSize is how many texts go to the provider at once (default
	// 64); each batch is written to disk before the next is asked for.
	BatchSize int
	// Progress, if set, is called after each batch, from Sync's goroutine.
	Progress func(Progress)
}

// Sync makes sections the store's sections and embeds, with p, each text
// that has no vector yet — only those: a text is known by its SHA-256,
// so unchanged, moved or renamed sections cost nothing. When p's model
// differs from the store's, every vector is dropped first (and the file
// replaced at the first write): vectors of two models are never mixed.
// For a remote p, texts go through [Outbound]: refused ones are skipped
// (found by words only). Each batch is appended and fsynced as it
// arrives, so an interrupted Sync keeps what it got; on error the
// sections embedded so far are searchable and the Cost says what was
// done. Dead vectors (texts no section has any more) are kept for a
// while — a text that comes back costs nothing — and dropped by
// rewriting the file once they outnumber the live ones.
func (s *Store) Sync(ctx context.Context, p Provider, sections []Section, opts SyncOptions) (Cost, error) {
	start := time.Now()
	cost := Cost{Model: p.Model(), Sections: len(sections)}
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if s.lock != nil {
		unlock, err := s.lock(ctx)
		if err != nil {
			return cost, fmt.Errorf("lock vector store: %w", err)
		}
		defer unlock()
	}
	var before Usage
	if m, ok := p.(Meter); ok {
		before = m.Usage()
	}
	err := s.sync(ctx, p, sections, opts, &cost, false)
	if m, ok := p.(Meter); ok {
		after := m.Usage()
		cost.Tokens, cost.Requests = after.Tokens-before.Tokens, after.Requests-before.Requests
	}
	cost.Elapsed = time.Since(start)
	return cost, err
}

func (s *Store) sync(ctx context.Context, p Provider, sections []Section, opts SyncOptions, cost *Cost, retried bool) error {
	s.mu.Lock()
	if err := s.refreshLocked(); err != nil {
		s.mu.Unlock()
		return err
	}
	if s.model != "" && s.model != p.Model() {
		s.resetLocked()
		cost.Reset = true
	}
	keys := make([]Key, len(sections))
	type job struct {
		key  Key
		text string
	}
	var todo []job
	queued := map[Key]bool{}
	for i, sec := range sections {
		keys[i] = KeyOf(sec.Text)
		if _, ok := s.byKey[keys[i]]; ok {
			cost.Cached++
			continue
		}
		if queued[keys[i]] {
			continue
		}
		queued[keys[i]] = true
		text := sec.Text
		if p.Remote() {
			out, redacted, ok := Outbound(text)
			if !ok {
				cost.Skipped++
				continue
			}
			if redacted {
				cost.Redacted++
			}
			text = out
		}
		todo = append(todo, job{keys[i], text})
	}
	s.setSectionsLocked(sections, keys)
	s.mu.Unlock()

	batch := opts.BatchSize
	if batch <= 0 {
		batch = 64
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Done: 0, Total: len(todo), Cached: cost.Cached})
	}
	for at := 0; at < len(todo); at += batch {
		jobs := todo[at:min(at+batch, len(todo))]
		texts := make([]string, len(jobs))
		for i, j := range jobs {
			texts[i] = j.text
		}
		vecs, err := p.Embed(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = errorf("embed", ErrMalformed, nil, "%d vectors for %d texts", len(vecs), len(texts))
		}
		if err != nil {
			s.mu.Lock()
			s.setSectionsLocked(sections, keys)
			s.mu.Unlock()
			return err
		}
		dims := len(vecs[0])
		for _, v := range vecs {
			if len(v) != dims || dims == 0 {
				return errorf("embed", ErrDimensions, nil, "vectors of %d and %d dimensions in one answer", dims, len(v))
			}
		}
		s.mu.Lock()
		if s.dims != 0 && s.dims != dims && len(s.keys) > 0 {
			// The same model name now gives other dimensions: it is
			// another model. Start over once, embedding everything.
			s.resetLocked()
			s.mu.Unlock()
			cost.Reset = true
			if retried {
				return errorf("embed", ErrDimensions, nil, "the model's dimensions keep changing")
			}
			*cost = Cost{Model: cost.Model, Sections: cost.Sections, Reset: true}
			return s.sync(ctx, p, sections, opts, cost, true)
		}
		jk := make([]Key, len(jobs))
		for i, j := range jobs {
			jk[i] = j.key
		}
		err = s.appendLocked(p.Model(), dims, jk, vecs)
		s.mu.Unlock()
		if err != nil {
			return err
		}
		cost.Embedded += len(jobs)
		for _, t := range texts {
			cost.Chars += int64(len([]rune(t)))
		}
		if opts.Progress != nil {
			opts.Progress(Progress{Done: at + len(jobs), Total: len(todo), Cached: cost.Cached})
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setSectionsLocked(sections, keys)
	if dead := len(s.keys) - len(s.live); dead > 1024 && dead > len(s.live) {
		return s.compactLocked(sections, keys)
	}
	return nil
}

// Use makes sections, whose texts have the keys keys (KeyOf of each
// text), the ranked set without embedding anything: for a process that
// searches a store another one synced, which keeps the sections' keys
// rather than their whole texts. Sections with no vector are not ranked.
// It reads what other processes wrote first, as [Store.Refresh] does.
func (s *Store) Use(sections []Section, keys []Key) error {
	if len(keys) != len(sections) {
		return fmt.Errorf("use sections: %d keys for %d sections", len(keys), len(sections))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.refreshLocked()
	s.setSectionsLocked(sections, keys)
	return err
}

// Refresh reads what other processes wrote to the store since it was
// opened or last synced (a Sync does this itself, under the lock): the
// sections of the last Sync are then matched to the vectors found.
func (s *Store) Refresh() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshLocked()
}

// refreshLocked re-reads the file if another process changed it.
func (s *Store) refreshLocked() error {
	fi, err := vault.Stat(s.path)
	var now fileStamp
	if err == nil {
		now = fileStamp{fi.Size(), fi.ModTime()}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("stat vector store: %w", err)
	}
	if now == s.seen {
		return nil
	}
	return s.load()
}

// resetLocked forgets every vector (the file is replaced at the next
// write).
func (s *Store) resetLocked() {
	s.model, s.dims, s.end, s.torn = "", 0, 0, 0
	s.keys, s.factor, s.data, s.bits = nil, nil, nil, nil
	s.byKey = map[Key]int32{}
	s.live, s.first = nil, nil
}

// appendLocked quantises vecs and appends them under keys, writing a new
// file first when the store has none for this model.
func (s *Store) appendLocked(model string, dims int, keys []Key, vecs [][]float32) error {
	if s.model != model || s.dims != dims || s.end == 0 {
		if err := vault.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
			return fmt.Errorf("create index folder: %w", err)
		}
		head := encodeStoreHeader(storeHeader{Model: model, Dims: dims})
		if err := atomicfile.WriteFile(s.path, head, 0o644); err != nil {
			return fmt.Errorf("write vector store: %w", err)
		}
		s.resetLocked()
		s.model, s.dims, s.end = model, dims, int64(len(head))
	}
	buf := make([]byte, 0, len(vecs)*recordSize(dims))
	q := make([]int8, dims)
	type row struct {
		k Key
		f float32
	}
	rows := make([]row, 0, len(vecs))
	var data []int8
	for i, v := range vecs {
		if _, dup := s.byKey[keys[i]]; dup {
			continue
		}
		f := quantize(v, q)
		buf = appendRecord(buf, keys[i], f, q)
		rows = append(rows, row{keys[i], f})
		data = append(data, q...)
	}
	if len(rows) == 0 {
		return nil
	}
	f, err := vault.OpenFile(s.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open vector store: %w", err)
	}
	// Write at the end of the last good record: a torn tail is cut off.
	if _, err := f.WriteAt(buf, s.end); err != nil {
		f.Close()
		return fmt.Errorf("append to vector store: %w", err)
	}
	if err := f.Truncate(s.end + int64(len(buf))); err != nil {
		f.Close()
		return fmt.Errorf("append to vector store: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync vector store: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close vector store: %w", err)
	}
	s.end += int64(len(buf))
	s.torn = 0
	for _, r := range rows {
		s.byKey[r.k] = int32(len(s.keys))
		s.keys = append(s.keys, r.k)
		s.factor = append(s.factor, r.f)
	}
	s.data = append(s.data, data...)
	if fi, err := vault.Stat(s.path); err == nil {
		s.seen = fileStamp{fi.Size(), fi.ModTime()}
	}
	return nil
}

// compactLocked rewrites the file with the live vectors only.
func (s *Store) compactLocked(sections []Section, keys []Key) error {
	out := encodeStoreHeader(storeHeader{Model: s.model, Dims: s.dims})
	var nkeys []Key
	var nfactor []float32
	ndata := make([]int8, 0, len(s.live)*s.dims)
	nby := make(map[Key]int32, len(s.live))
	for _, r := range s.live {
		q := s.data[int(r)*s.dims : int(r+1)*s.dims]
		out = appendRecord(out, s.keys[r], s.factor[r], q)
		nby[s.keys[r]] = int32(len(nkeys))
		nkeys = append(nkeys, s.keys[r])
		nfactor = append(nfactor, s.factor[r])
		ndata = append(ndata, q...)
	}
	if err := atomicfile.WriteFile(s.path, out, 0o644); err != nil {
		return fmt.Errorf("compact vector store: %w", err)
	}
	s.keys, s.factor, s.data, s.byKey, s.bits = nkeys, nfactor, ndata, nby, nil
	s.end, s.torn = int64(len(out)), 0
	if fi, err := vault.Stat(s.path); err == nil {
		s.seen = fileStamp{fi.Size(), fi.ModTime()}
	}
	s.setSectionsLocked(sections, keys)
	return nil
}

// setSectionsLocked makes sections (with their keys) the ranked set: each
// distinct row once, with the chain of its sections.
func (s *Store) setSectionsLocked(sections []Section, keys []Key) {
	s.sections, s.secKeys = sections, keys
	s.next = make([]int32, len(sections))
	headOf := map[int32]int32{}
	var rows []int32
	for i := len(sections) - 1; i >= 0; i-- {
		s.next[i] = -1
		r, ok := s.byKey[keys[i]]
		if !ok {
			continue
		}
		if h, ok := headOf[r]; ok {
			s.next[i] = h
		} else {
			rows = append(rows, r)
		}
		headOf[r] = int32(i)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i] < rows[j] })
	s.live = rows
	s.first = make([]int32, len(rows))
	for i, r := range rows {
		s.first[i] = headOf[r]
	}
}

// Search returns the k sections (of the last Sync) most similar to the
// query vector q, best first, by brute force over the int8 vectors; ties
// go to the earlier section. q must have the store's dimensions. Over
// large stores (rows × dimensions ≥ 2^23) it ranks only the rows a sign-bit
// prefilter keeps (see prefilterFrom), which may, rarely, miss a weak
// neighbour; [Store.SearchExact] never does.
func (s *Store) Search(q []float32, k int) ([]Hit, error) { return s.search(q, k, false) }

// SearchExact is [Store.Search] without the prefilter: every live vector
// is compared, whatever the store's size.
func (s *Store) SearchExact(q []float32, k int) ([]Hit, error) { return s.search(q, k, true) }

func (s *Store) search(q []float32, k int, exact bool) ([]Hit, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if k <= 0 || len(s.live) == 0 {
		return nil, nil
	}
	if len(q) != s.dims {
		return nil, errorf("embed", ErrDimensions, nil, "query of %d dimensions for vectors of %d", len(q), s.dims)
	}
	qq := make([]int8, s.dims)
	qf := quantize(q, qq)
	if qf == 0 {
		return nil, nil
	}
	var top []cand
	if !exact && len(s.live)*s.dims >= prefilterFrom {
		top = s.topRows(qq, k, s.prefilter(qq, max(prefilterKeep, 50*k, len(s.live)/10)))
	} else {
		top = s.topRows(qq, k, nil)
	}
	var hits []Hit
	for _, c := range top {
		score := float32(c.dot) * s.factor[s.live[c.i]] * qf
		for j := s.first[c.i]; j >= 0 && len(hits) < k; j = s.next[j] {
			hits = append(hits, Hit{Section: s.sections[j], Score: score})
		}
		if len(hits) == k {
			break
		}
	}
	return hits, nil
}

type cand struct {
	i     int     // index into live
	dot   int32   // int8 dot product
	score float32 // dot scaled by the row's factor (the query's is common)
}

// candHeap is a min-heap of the best candidates so far (worst on top).
type candHeap []cand

func (h candHeap) Len() int { return len(h) }
func (h candHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].i > h[j].i
}
func (h candHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)   { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// parallelFrom is the number of live rows from which a search is split
// across the CPUs.
const parallelFrom = 8192

// Searches over at least prefilterFrom components (rows × dimensions:
// 32,768 vectors of 256, 10,923 of 768) first keep the tenth of the rows
// (at least prefilterKeep, and 50 per hit asked) whose sign bits differ
// least from the query's, and rank only those by the int8 dot product:
// a popcount per 64 dimensions for every row, then a tenth of the exact
// work. The sign bits of two vectors agree in proportion to the angle
// between them (random-hyperplane hashing), so a close neighbour is
// practically always kept and a weak one usually; TestPrefilterRecall
// measures both.
const (
	prefilterFrom = 1 << 23
	prefilterKeep = 2000
)

// words64 is how many uint64 hold dims sign bits.
func words64(dims int) int { return (dims + 63) / 64 }

// signBits appends the sign bits of rows s has none for yet and returns
// them all; s.mu is held for reading at least.
func (s *Store) signBits() []uint64 {
	s.bitsMu.Lock()
	defer s.bitsMu.Unlock()
	w := words64(s.dims)
	for r := len(s.bits) / w; r < len(s.keys); r++ {
		s.bits = append(s.bits, signs(s.data[r*s.dims:(r+1)*s.dims])...)
	}
	return s.bits
}

// signs packs the sign bits (q > 0) of q.
func signs(q []int8) []uint64 {
	out := make([]uint64, words64(len(q)))
	for i, x := range q {
		if x > 0 {
			out[i/64] |= 1 << (i % 64)
		}
	}
	return out
}

// prefilter returns the indexes into s.live of about keep rows whose sign
// bits are nearest qq's in Hamming distance (all of them on ties at the
// cut, in ascending order).
func (s *Store) prefilter(qq []int8, keep int) []int32 {
	n := len(s.live)
	if keep >= n {
		return nil
	}
	bits := s.signBits()
	qb := signs(qq)
	w := len(qb)
	dist := make([]uint16, n)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/(parallelFrom/2)))
	var wg sync.WaitGroup
	for wk := range workers {
		lo, hi := n*wk/workers, n*(wk+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				r := int(s.live[i])
				row := bits[r*w : (r+1)*w]
				d := 0
				for j, x := range qb {
					d += bits64.OnesCount64(x ^ row[j])
				}
				dist[i] = uint16(d)
			}
		}()
	}
	wg.Wait()
	// The cut: the smallest distance at which keep rows are reached.
	hist := make([]int, s.dims+1)
	for _, d := range dist {
		hist[d]++
	}
	cutoff, total := 0, 0
	for cutoff < len(hist) {
		total += hist[cutoff]
		if total >= keep {
			break
		}
		cutoff++
	}
	out := make([]int32, 0, total)
	for i, d := range dist {
		if int(d) <= cutoff {
			out = append(out, int32(i))
		}
	}
	return out
}

// topRows is the k best live rows for qq, best first: among only the
// live indexes in only, when it is not nil.
func (s *Store) topRows(qq []int8, k int, only []int32) []cand {
	n := len(s.live)
	if only != nil {
		n = len(only)
	}
	workers := 1
	if n >= parallelFrom {
		workers = min(runtime.GOMAXPROCS(0), n/(parallelFrom/2))
	}
	parts := make([]candHeap, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := make(candHeap, 0, k+1)
			d := s.dims
			for x := lo; x < hi; x++ {
				i := x
				if only != nil {
					i = int(only[x])
				}
				r := int(s.live[i])
				dot := dot8(qq, s.data[r*d:(r+1)*d])
				c := cand{i: i, dot: dot, score: float32(dot) * s.factor[r]}
				if len(h) < k {
					heap.Push(&h, c)
				} else if better(c, h[0]) {
					h[0] = c
					heap.Fix(&h, 0)
				}
			}
			parts[w] = h
		}()
	}
	wg.Wait()
	var all []cand
	for _, p := range parts {
		all = append(all, p...)
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	return all[:min(k, len(all))]
}

func better(a, b cand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.i < b.i
}

// Query embeds text with p and returns its k nearest sections. p must be
// the model the store holds (else [ErrOtherModel]); for a remote p, text goes through
// [Outbound] and is not sent when the scan refuses it ([ErrWithheld]).
func (s *Store) Query(ctx context.Context, p Provider, text string, k int) ([]Hit, error) {
	s.mu.RLock()
	model := s.model
	s.mu.RUnlock()
	if model == "" {
		return nil, nil
	}
	if model != p.Model() {
		return nil, errorf("embed", ErrOtherModel, nil, "the store holds vectors of %q, not %q; sync first", model, p.Model())
	}
	if p.Remote() {
		out, redacted, ok := Outbound(text)
		if !ok || redacted {
			return nil, errorf("embed", ErrWithheld, nil, "the query holds what the security scan refuses")
		}
		text = out
	}
	vecs, err := p.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, errorf("embed", ErrMalformed, nil, "%d vectors for one query", len(vecs))
	}
	return s.Search(vecs[0], k)
}
