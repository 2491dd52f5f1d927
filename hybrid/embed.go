package hybrid

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/internal/atomicfile"
	"github.com/nexus-memory/nexus/vault"
)

// SectionsFile is the file, in .nexus/index/ next to the vectors
// (embed.StoreFile), that lists the sections of the last embedding run: each one's path, lines,
// the key of its text and its first lines (a hit found by meaning alone
// is shown with them), and what the run cost. A search reads it rather
// than every note.
const SectionsFile = "embeddings.sections"

// headBytes bounds the first lines of a section kept for its snippet.
const headBytes = 280

// record is one section as SectionsFile keeps it.
type record struct {
	Path          string
	Line, EndLine int
	Key           embed.Key
	Head          string
}

// sidecar is SectionsFile's content.
type sidecar struct {
	Model    string
	Cost     embed.Cost
	At       time.Time
	Err      string // the run's failure, if it failed
	Sections []record
}

// Report is what an embedding run did, and what the store holds after it.
type Report struct {
	Cost   embed.Cost   `json:"cost"`
	Status embed.Status `json:"status"`
}

// Embedder keeps a vault's vector store in step with its notes: each run
// lists the sections (re-reading only notes changed since its last run)
// and embeds the texts the store has no vector for.
type Embedder struct {
	v      *vault.Vault
	lister *index.SectionLister
	p      embed.Provider // nil: from the vault's config at each run
}

// NewEmbedder returns an Embedder of v's notes. p is the provider to use;
// nil takes the one search.embeddings configures, at each run.
func NewEmbedder(v *vault.Vault, p embed.Provider) *Embedder {
	return &Embedder{v: v, lister: index.NewSectionLister(v), p: p}
}

// Run embeds what changed since the last run. progress, if set, is called
// after each batch. It returns an error wrapping embed.ErrNotConfigured
// when no model is configured; on another error the sections embedded so
// far are kept and searchable.
func (e *Embedder) Run(ctx context.Context, progress func(embed.Progress)) (Report, error) {
	p := e.p
	if p == nil {
		var err error
		if p, err = embed.New(e.v.Config().Search.Embeddings, e.v.Root()); err != nil {
			return Report{}, err
		}
	}
	secs, err := e.lister.List(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("list sections: %w", err)
	}
	st, err := embed.OpenStore(e.v)
	if err != nil {
		return Report{}, err
	}
	in := make([]embed.Section, len(secs))
	recs := make([]record, len(secs))
	for i, s := range secs {
		in[i] = embed.Section{Path: s.Path, Line: s.Line, Text: s.Text}
		recs[i] = record{Path: s.Path, Line: s.Line, EndLine: s.EndLine, Key: embed.KeyOf(s.Text), Head: head(s.Text)}
	}
	cost, err := st.Sync(ctx, p, in, embed.SyncOptions{BatchSize: e.v.Config().Search.Embeddings.Batch(), Progress: progress})
	sc := sidecar{Model: p.Model(), Cost: cost, At: time.Now().UTC(), Sections: recs}
	if err != nil {
		sc.Err = embed.Notice(err)
	}
	if werr := writeSidecar(e.v, sc); err == nil {
		err = werr
	}
	return Report{Cost: cost, Status: st.Status()}, err
}

// head is the first lines of a section's text, for a snippet.
func head(text string) string {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) > 3 {
		lines = lines[:3]
	}
	s := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	if len(s) > headBytes {
		n := headBytes
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

func sidecarPath(v *vault.Vault) string {
	return filepath.Join(v.MustPath(vault.IndexDir), SectionsFile)
}

func writeSidecar(v *vault.Vault, sc sidecar) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(sc); err != nil {
		return fmt.Errorf("encode %s: %w", SectionsFile, err)
	}
	if err := atomicfile.WriteFile(sidecarPath(v), buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SectionsFile, err)
	}
	return nil
}

// readSidecar reads SectionsFile; ok is false when there is none (or it
// does not decode: it is then made again by the next run).
func readSidecar(path string) (sc sidecar, ok bool, err error) {
	data, err := vault.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return sc, false, nil
	}
	if err != nil {
		return sc, false, fmt.Errorf("read %s: %w", SectionsFile, err)
	}
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&sc) != nil {
		return sidecar{}, false, nil
	}
	return sc, true, nil
}

// Status is what is embedded, for 'nexus index status'.
type Status struct {
	Configured bool         `json:"configured"`           // search.embeddings sets a provider
	Store      embed.Status `json:"store"`                // the vectors on disk
	Sections   int          `json:"sections"`             // sections of the last run
	Embedded   int          `json:"embedded"`             // of those, sections with a vector
	Last       embed.Cost   `json:"last"`                 // what the last run did and cost
	LastAt     time.Time    `json:"last_at,omitzero"`     // when it ran (zero: never)
	LastErr    string       `json:"last_error,omitempty"` // its failure, if it failed
}

// ReadStatus reports what v's store holds and what its last run cost,
// without loading a model.
func ReadStatus(v *vault.Vault) (Status, error) {
	s := Status{Configured: v.Config().Search.Embeddings.Enabled()}
	st, err := embed.OpenStore(v)
	if err != nil {
		return s, err
	}
	sc, ok, err := readSidecar(sidecarPath(v))
	if err != nil {
		return s, err
	}
	if ok {
		secs, keys := sc.sections()
		if err := st.Use(secs, keys); err != nil {
			return s, err
		}
		s.Sections, s.Last, s.LastAt, s.LastErr = len(sc.Sections), sc.Cost, sc.At, sc.Err
	}
	s.Store = st.Status()
	s.Embedded = s.Store.Embedded
	return s, nil
}

// sections are sc's records as the store takes them.
func (sc sidecar) sections() ([]embed.Section, []embed.Key) {
	secs := make([]embed.Section, len(sc.Sections))
	keys := make([]embed.Key, len(sc.Sections))
	for i, r := range sc.Sections {
		secs[i] = embed.Section{Path: r.Path, Line: r.Line, Text: r.Head}
		keys[i] = r.Key
	}
	return secs, keys
}
