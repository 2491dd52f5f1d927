//go:build !lite

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/vault"
)

func newIndexEmbedCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "embed",
		Short: "Embed the notes' sections with the model of search.embeddings (search by meaning)",
		Long: `Embed every section of every note with the embedding model configured under
search.embeddings in .nexus/config.yaml (docs/embeddings.md), so that 'nexus
search' and memory_search rank by meaning as well as by words. Only text the
store has no vector for is sent to the model: a second run, a rebuild or a
rename embeds nothing; an edit embeds the edited section. A change of model
embeds everything again. Shows a progress bar on a terminal, plain progress
lines otherwise, then what it cost: sections, cache hits, texts embedded,
characters and tokens sent, requests and time.

'nexus index rebuild' runs this too when a model is configured, and
'nexus serve' keeps the vectors in step as notes change. An embedding run
that fails halfway keeps what it got; the next run asks only for the rest.

Example:
  nexus index embed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexEmbed(g)
		},
	}
}

// runIndexEmbed embeds what changed and says what it cost.
func runIndexEmbed(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	rep, err := runEmbed(g, v)
	if errors.Is(err, embed.ErrNotConfigured) {
		return usagef("no embedding model is configured: set search.embeddings in .nexus/config.yaml (docs/embeddings.md)")
	}
	if err != nil {
		return fmt.Errorf("embed sections: %w", err)
	}
	return g.emit(rep, nil, func(w io.Writer) { printCost(w, rep.Cost) })
}

// runEmbed embeds the vault's sections with a progress display on stderr.
func runEmbed(g *globals, v *vault.Vault) (hybrid.Report, error) {
	bar := &embedProgress{w: g.stderr, tty: redraws(isTerminal(g.stderr), os.Getenv), lastPct: -1}
	rep, err := hybrid.NewEmbedder(v, nil).Run(g.ctx, bar.update)
	bar.done()
	return rep, err
}

// printCost says what an embedding run did and cost.
func printCost(w io.Writer, c embed.Cost) {
	fmt.Fprintf(w, "Embedded %d sections with %s: %d cached, %d embedded", c.Sections, c.Model, c.Cached, c.Embedded)
	if c.Skipped > 0 {
		fmt.Fprintf(w, ", %d withheld by the security scan", c.Skipped)
	}
	fmt.Fprintf(w, "; %d characters", c.Chars)
	if c.Tokens > 0 {
		fmt.Fprintf(w, ", %d tokens", c.Tokens)
	}
	fmt.Fprintf(w, ", %d requests, %.1fs.\n", c.Requests, c.Elapsed.Seconds())
	if c.Reset {
		fmt.Fprintln(w, "The model changed: every section was embedded again.")
	}
}

// embedProgress draws an embedding run's progress: a bar redrawn in place
// on a terminal, a line per 10% otherwise.
type embedProgress struct {
	w        io.Writer
	tty      bool
	lastPct  int
	drawn    bool
	lastDraw time.Time
}

func (b *embedProgress) update(p embed.Progress) {
	pct := 100
	if p.Total > 0 {
		pct = p.Done * 100 / p.Total
	}
	if b.tty {
		now := time.Now()
		if now.Sub(b.lastDraw) < 100*time.Millisecond && p.Done != p.Total {
			return
		}
		b.lastDraw = now
		const width = 30
		fill := pct * width / 100
		fmt.Fprintf(b.w, "\rembedding [%s%s] %3d%% %d/%d texts (%d cached)\033[K", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, p.Done, p.Total, p.Cached)
		b.drawn = true
		return
	}
	if pct/10 != b.lastPct/10 || b.lastPct < 0 {
		fmt.Fprintf(b.w, "embedding: %d/%d texts (%d%%), %d sections cached\n", p.Done, p.Total, pct, p.Cached)
		b.lastPct = pct
	}
}

func (b *embedProgress) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// printEmbedStatus is the embeddings part of 'nexus index status'.
func printEmbedStatus(w io.Writer, s hybrid.Status) {
	if !s.Configured {
		fmt.Fprintln(w, "meaning:     off (set search.embeddings in .nexus/config.yaml; docs/embeddings.md)")
		return
	}
	if s.Store.Model == "" {
		fmt.Fprintln(w, "meaning:     nothing embedded yet (run 'nexus index embed')")
		return
	}
	fmt.Fprintf(w, "meaning:     %d of %d sections embedded, model %s (%d dimensions), %s\n", s.Embedded, s.Sections, s.Store.Model, s.Store.Dims, humanBytes(s.Store.Bytes))
	if !s.LastAt.IsZero() {
		c := s.Last
		fmt.Fprintf(w, "last embed:  %s: %d cached, %d embedded, %d characters, %d tokens, %d requests, %.1fs\n",
			s.LastAt.Format(time.RFC3339), c.Cached, c.Embedded, c.Chars, c.Tokens, c.Requests, c.Elapsed.Seconds())
	}
	if s.LastErr != "" {
		fmt.Fprintf(w, "last error:  %s\n", s.LastErr)
	}
}
