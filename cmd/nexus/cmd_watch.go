//go:build !lite

package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/conflicts"
	"github.com/nexus-memory/nexus/curator"
	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/retention"
)

func init() { register("watch", newWatchCmd) }

// watchOptions are the flags of 'nexus watch'.
type watchOptions struct {
	debounce  time.Duration // --debounce
	reconcile time.Duration // --reconcile
}

func newWatchCmd(g *globals) *cobra.Command {
	var o watchOptions
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Keep the search index current until interrupted",
		Long: `Watch every folder of the vault (new folders included, dot-folders such as
.obsidian/ skipped) and index each markdown file a short while after it was
saved (--debounce), re-reading until its content is stable, so editors that
save in place or through a temp file and rename are both fine. A periodic
size+mtime walk (--reconcile) catches anything the watcher missed.

It also carries out reviews decided in Obsidian (status: approved or
rejected in a review/pending/ file) and keeps every agent's
memory/INDEX.md in step with fact files edited by hand, every few seconds.
With an embedding model configured (search.embeddings), it embeds the
sections of changed notes once the vault has been quiet for two seconds,
so search by meaning stays current without 'nexus index embed'.

While it runs, 'nexus search' in other terminals asks this process, so
answers are current and the index is never "locked". If another process
already holds the index, watch waits and takes over when it exits.
Stop with Ctrl-C.

Example:
  nexus watch --debounce 200ms`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runWatch(g, o) },
	}
	cmd.Flags().DurationVar(&o.debounce, "debounce", 100*time.Millisecond, "quiet time after a change before indexing the file")
	cmd.Flags().DurationVar(&o.reconcile, "reconcile", time.Minute, "period of the size+mtime walk that catches missed changes (0 = default)")
	return cmd
}

// runWatch keeps the index (and the reviews and memory indexes) current
// until interrupted.
func runWatch(g *globals, o watchOptions) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	opts := index.Options{Debounce: o.debounce, ReconcileEvery: o.reconcile}
	var ix *index.Index
	for {
		ix, err = index.Open(v, opts)
		if err != nil {
			return err
		}
		if !ix.Remote() {
			break
		}
		// The background holder 'nexus search' leaves steps down
		// when asked; a 'watch' or 'serve' does not.
		wait := 2 * time.Second
		if yielded, _ := ix.AskHolderToYield(g.ctx); yielded {
			wait = 100 * time.Millisecond
		} else if !g.json {
			fmt.Fprintf(g.stderr, "nexus: the index is held by pid %d; waiting to take over\n", ix.HolderPID())
		}
		ix.Close()
		select {
		case <-g.ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	defer ix.Close()
	if err := ix.Start(g.ctx); err != nil {
		return err
	}
	// Merge sync-conflict copies, carry out reviews a person approves
	// or rejects in Obsidian, keep memory indexes in step with
	// hand-edited fact files, and run the curator's automatic passes.
	keeper := retention.StartKeeper(g.ctx, v, retention.KeeperOptions{
		Logger: slog.New(slog.NewTextHandler(g.stderr, nil)),
		Before: conflicts.Keep,
		After:  new(curator.Auto).Run,
	})
	defer keeper.Close()
	// With an embedding model configured, keep the vectors of search by
	// meaning in step with the notes too.
	kctx, stop := context.WithCancel(g.ctx)
	var kept sync.WaitGroup
	kept.Go(func() {
		hybrid.Keep(kctx, v, ix, func(err error) {
			fmt.Fprintf(g.stderr, "nexus: embed sections for search by meaning: %s\n", embed.Notice(err))
		})
	})
	defer func() { stop(); kept.Wait() }()
	st, err := ix.Status(g.ctx)
	if err != nil {
		return err
	}
	if !g.json {
		fmt.Fprintf(g.stderr, "Watching %s: %d files, %d documents indexed. Ctrl-C to stop.\n", v.Root(), st.Files, st.Documents)
	}
	<-g.ctx.Done()
	if err := ix.Close(); err != nil {
		return err
	}
	return g.emit(map[string]any{"stopped": true, "files": st.Files}, nil, nil)
}
