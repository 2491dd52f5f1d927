package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// defaultHold is how long the holder that 'nexus search' starts stays
// after the last search; $NEXUS_SEARCH_HOLD overrides it.
const defaultHold = 10 * time.Minute

func newIndexHoldCmd(g *globals) *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "hold",
		Short: "Hold the search index open for other processes until idle",
		Long: `Open the search index, keep it current (as 'nexus watch' does, without the
review and fact-index upkeep) and answer the searches of other processes
until nobody has asked anything for --idle, then exit. With --idle 0 it
runs until interrupted. If another process already holds the index it exits
at once. It steps down when 'nexus watch' or 'nexus serve' starts (they
then hold the index), or when another version of Nexus needs the index.

'nexus search' starts one in the background after answering a search that
had to open the index itself, so that the next searches answer in a few
milliseconds instead of re-checking every file of the vault; see
'nexus search --help' (--hold) to change or turn that off.

Example:
  nexus index hold --idle 30m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v, err := g.openVault()
			if err != nil {
				return err
			}
			// It steps down when 'nexus watch', 'nexus serve' or a newer
			// Nexus asks, and its searches wait for its first catch-up
			// (short: the search that started it had just synced).
			ix, err := index.Open(v, index.Options{Yield: true, WaitCatchUp: true})
			if err != nil {
				return err
			}
			defer ix.Close()
			if ix.Remote() {
				return g.emit(map[string]any{"held_by": ix.HolderPID()}, nil, nil)
			}
			if err := ix.Start(g.ctx); err != nil {
				return err
			}
			// Check every few seconds (a stat and a clock read) so that
			// a deleted vault does not keep a process around.
			tick := 5 * time.Second
			if idle > 0 {
				tick = min(tick, max(idle/10, 100*time.Millisecond))
			}
			t := time.NewTicker(tick)
			defer t.Stop()
			for {
				select {
				case <-g.ctx.Done():
					return ix.Close()
				case <-ix.Yielded():
					return ix.Close()
				case <-t.C:
				}
				if idle > 0 && time.Since(ix.LastAsked()) >= idle {
					return ix.Close()
				}
				if _, err := os.Stat(v.MustPath(vault.IndexDir)); err != nil {
					return ix.Close() // the vault was deleted or moved
				}
			}
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", defaultHold, "exit after this long without a request (0 = until interrupted)")
	return cmd
}

// holdDuration is --hold, else $NEXUS_SEARCH_HOLD, else defaultHold.
func holdDuration(flag string) (time.Duration, error) {
	s := flag
	if s == "" {
		s = os.Getenv("NEXUS_SEARCH_HOLD")
	}
	if s == "" {
		return defaultHold, nil
	}
	if s == "0" || s == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--hold / NEXUS_SEARCH_HOLD %q: want a duration such as 10m, or 0 to start no holder", s)
	}
	return d, nil
}

// startHolder starts 'nexus index hold' in the background, detached from
// this process and its terminal, for the next searches. Its errors go to
// .nexus/index/hold.log. It is never started from a test binary (the
// executable would be the test).
func startHolder(v *vault.Vault, idle time.Duration) error {
	if idle <= 0 || testing.Testing() {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir), "hold.log")
	// Appended to (two searches may start holders at once; one of them
	// exits at once), and started afresh once it is large.
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if st, err := os.Stat(logPath); err == nil && st.Size() > 1<<20 {
		flags |= os.O_TRUNC
	}
	logf, err := os.OpenFile(logPath, flags, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	c := exec.Command(exe, "--vault", v.Root(), "index", "hold", "--idle", idle.String())
	c.Stdout, c.Stderr = logf, logf
	// Not in the vault: on Windows a process's working folder cannot be
	// deleted or renamed.
	c.Dir = os.TempDir()
	c.SysProcAttr = detached()
	if err := c.Start(); err != nil {
		return fmt.Errorf("start index holder: %w", err)
	}
	return c.Process.Release()
}
