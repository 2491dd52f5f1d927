//go:build !lite

package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/index"
)

func init() { register("index", newIndexCmd) }

func newIndexCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Rebuild the search index or show its status",
		Long: `The search index in .nexus/index/ is derived from the markdown alone: it can
be deleted and rebuilt at any time. 'nexus search' keeps it current by
itself; 'nexus watch' or 'nexus serve' keep it current continuously.

Examples:
  nexus index rebuild
  nexus index embed
  nexus index status --json`,
	}
	var rebuildOpts indexRebuildOptions
	rebuild := &cobra.Command{
		Use:   "rebuild",
		Short: "Recreate the search index from the markdown",
		Long: `Recreate the search index from every markdown file of the vault (outside
dot-folders such as .obsidian/ and .nexus/). Searches keep answering from the
old index until the new one is complete. Shows a progress bar with the rate
and the time left on a terminal, plain progress lines otherwise. When an
embedding model is configured (search.embeddings), the notes' sections are
then embedded as 'nexus index embed' does (unchanged text costs nothing).

--memory bounds the memory the rebuild uses (default 256MiB, about 250 MB
resident for 10,000 notes): it sizes the batches of documents analysed at
once and caps the Go heap. A smaller budget is slower; a larger one is
faster on a machine with memory to spare. The last step merges the index
files through memory-mapped reads, which adds about the index's size at its
end (about 530 MB resident in all for 100,000 notes).

Example:
  nexus index rebuild`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexRebuild(g, rebuildOpts)
		},
	}
	rebuild.Flags().StringVar(&rebuildOpts.memory, "memory", "256MiB", "about how much memory indexing may use (e.g. 128MiB, 1GiB): less is slower")
	status := &cobra.Command{
		Use:   "status",
		Short: "Show documents, size, last update and pending changes of the search index",
		Long: `Show the search index's documents and files, its size on disk, when it last
changed, how many markdown files changed on disk since (pending), which
process holds it, and what is embedded for search by meaning: sections, the
model, and what the last 'nexus index embed' cost.

Example:
  nexus index status --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexStatus(g)
		},
	}
	cmd.AddCommand(rebuild, status, newIndexEmbedCmd(g), newIndexHoldCmd(g))
	return cmd
}

// indexRebuildOptions are the flags of 'nexus index rebuild'.
type indexRebuildOptions struct {
	memory string // --memory
}

// runIndexRebuild recreates the index and prints what it holds.
func runIndexRebuild(g *globals, o indexRebuildOptions) error {
	budget, err := parseBytes(o.memory)
	if err != nil || budget < 32<<20 {
		return usagef("--memory %q: want a size of at least 32MiB, such as 256MiB or 1GiB", o.memory)
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	ix, err := index.Open(v, index.Options{MemoryBudget: budget})
	if err != nil {
		return err
	}
	defer ix.Close()
	// The heap's cap (a process-wide setting, so here, not in the index
	// package): three quarters of the budget, the rest being the index
	// files mapped into memory. Under it, collecting garbage less often
	// (GOGC 300) saves about a sixth of the CPU.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(budget * 3 / 4))
	defer debug.SetGCPercent(debug.SetGCPercent(300))
	start := time.Now()
	bar := newProgressBar(g.stderr)
	err = ix.Rebuild(g.ctx, bar.update)
	bar.done()
	if err != nil {
		return err
	}
	st, err := ix.Status(g.ctx)
	if err != nil {
		return err
	}
	res := struct {
		index.Status
		Seconds    float64        `json:"seconds"`
		Embeddings *hybrid.Report `json:"embeddings,omitempty"`
	}{Status: st, Seconds: time.Since(start).Seconds()}
	var embedErr error
	if v.Config().Search.Embeddings.Enabled() {
		// The word index is done; a failing model costs only the meaning.
		rep, err := runEmbed(g, v)
		if err != nil {
			embedErr = err
		} else {
			res.Embeddings = &rep
		}
	}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Indexed %d files (%d documents) in %.1fs; index is %s.\n", st.Files, st.Documents, res.Seconds, humanBytes(st.SizeBytes))
		if res.Embeddings != nil {
			printCost(w, res.Embeddings.Cost)
		}
		if embedErr != nil {
			fmt.Fprintf(w, "Not embedded: %s\n", embed.Notice(embedErr))
		}
	})
}

// runIndexStatus prints the index's status.
func runIndexStatus(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	ix, err := openIndex(g, v, false)
	if err != nil {
		return err
	}
	defer ix.Close()
	st, err := ix.Status(g.ctx)
	if err != nil {
		return err
	}
	es, err := hybrid.ReadStatus(v)
	if err != nil {
		return err
	}
	out := struct {
		index.Status
		Embeddings hybrid.Status `json:"embeddings"`
	}{st, es}
	return g.emit(out, nil, func(w io.Writer) {
		fmt.Fprintf(w, "index:       %s (%s)\n", st.Dir, humanBytes(st.SizeBytes))
		fmt.Fprintf(w, "files:       %d\ndocuments:   %d\n", st.Files, st.Documents)
		last := "never"
		if !st.LastUpdate.IsZero() {
			last = st.LastUpdate.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "last update: %s\n", last)
		if st.Rebuilding {
			fmt.Fprintln(w, "rebuilding:  yes (searches answer from the previous index)")
		} else {
			fmt.Fprintf(w, "pending:     %d\n", st.Pending)
		}
		for _, p := range st.PendingPaths {
			fmt.Fprintf(w, "  %s\n", p)
		}
		switch {
		case st.Remote && st.Watching:
			fmt.Fprintf(w, "held by:     pid %d, watching\n", st.HolderPID)
		case st.Remote:
			fmt.Fprintf(w, "held by:     pid %d\n", st.HolderPID)
		default:
			fmt.Fprintln(w, "held by:     nobody (run 'nexus watch' to keep it current)")
		}
		switch st.ReadOnly {
		case "disk":
			fmt.Fprintln(w, "read-only:   yes; searches use this index while it is fresh, else build one in memory")
		case "memory":
			fmt.Fprintln(w, "read-only:   yes; the index on disk is missing or stale, so searches build one in memory")
		}
		for _, fw := range st.FileWarnings {
			for _, warn := range fw.Warnings {
				fmt.Fprintf(w, "warning:     %s: %s\n", fw.Path, warn)
			}
		}
		for _, warn := range st.Warnings {
			fmt.Fprintf(w, "warning:     %s\n", warn)
		}
		printEmbedStatus(w, es)
	})
}

// progressBar draws indexing progress with its rate and the time left: a
// bar redrawn in place on a terminal, a plain line per 10% otherwise
// (and with TERM=dumb or NO_COLOR: see redraws).
type progressBar struct {
	w        io.Writer
	tty      bool
	lastPct  int
	drawn    bool
	start    time.Time
	lastDraw time.Time
	now      func() time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, tty: redraws(isTerminal(w), os.Getenv), lastPct: -1, now: time.Now}
}

func (b *progressBar) update(p index.Progress) {
	now := b.now()
	if b.start.IsZero() {
		b.start = now
	}
	if p.Merging {
		// Every file is analysed; the segments are merged into one, a
		// step with nothing to count.
		if b.tty {
			fmt.Fprintf(b.w, "\rindexing: all %d files analysed, merging the index%s\033[K", p.Total, b.rate(now, p))
			b.drawn = true
			return
		}
		fmt.Fprintf(b.w, "indexing: all %d files analysed, merging the index%s\n", p.Total, b.rate(now, p))
		return
	}
	pct := 100
	if p.Total > 0 {
		pct = p.Done * 100 / p.Total
	}
	if b.tty {
		if now.Sub(b.lastDraw) < 100*time.Millisecond && p.Done != p.Total {
			return
		}
		b.lastDraw = now
		const width = 30
		fill := pct * width / 100
		fmt.Fprintf(b.w, "\rindexing [%s%s] %3d%% %d/%d files%s\033[K", strings.Repeat("#", fill), strings.Repeat(".", width-fill), pct, p.Done, p.Total, b.rate(now, p))
		b.drawn = true
		return
	}
	if pct/10 != b.lastPct/10 || b.lastPct < 0 {
		fmt.Fprintf(b.w, "indexing: %d/%d files (%d%%)%s\n", p.Done, p.Total, pct, b.rate(now, p))
		b.lastPct = pct
	}
}

// rate is ", N files/s, about T left" once there is a rate to tell.
func (b *progressBar) rate(now time.Time, p index.Progress) string {
	el := now.Sub(b.start)
	if p.Done == 0 || el < time.Second {
		return ""
	}
	r := float64(p.Done) / el.Seconds()
	s := fmt.Sprintf(", %.0f files/s", r)
	if p.Done < p.Total {
		left := time.Duration(float64(p.Total-p.Done) / r * float64(time.Second))
		s += fmt.Sprintf(", about %s left", left.Round(time.Second))
	}
	return s
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// parseBytes reads a size: a number with an optional unit B, KB/KiB,
// MB/MiB, GB/GiB (both read as powers of 1024), case-insensitive.
func parseBytes(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"gib", 1 << 30}, {"gb", 1 << 30}, {"g", 1 << 30}, {"mib", 1 << 20}, {"mb", 1 << 20}, {"m", 1 << 20}, {"kib", 1 << 10}, {"kb", 1 << 10}, {"k", 1 << 10}, {"b", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q", s)
	}
	return n * mult, nil
}
