//go:build !lite

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// indexHoldOptions are the flags of 'nexus index hold'.
type indexHoldOptions struct {
	idle time.Duration
	stop bool
}

func newIndexHoldCmd(g *globals) *cobra.Command {
	var o indexHoldOptions
	cmd := &cobra.Command{
		Use:   "hold",
		Short: "Hold the search index open for other processes until idle (--stop ends it)",
		Long: `Open the search index, keep it current (as 'nexus watch' does, without the
review and fact-index upkeep) and answer the searches of other processes
until nobody has asked anything for --idle, then exit. With --idle 0 it
runs until interrupted. If another process already holds the index it exits
at once. It steps down when 'nexus watch' or 'nexus serve' starts (they
then hold the index), or when another version of Nexus needs the index.

'nexus search' run on a terminal starts one in the background after
answering a search that had to open the index itself, so that the next
searches answer in a few milliseconds instead of re-checking every file of
the vault. A script or CI run starts none unless --hold, $NEXUS_SEARCH_HOLD
or search.hold in .nexus/config.yaml asks for it; see 'nexus search --help'.

--stop asks the background holder to exit and waits (up to 5 s) until it
has. It does not stop 'nexus watch' or 'nexus serve' (exit 1 says so).

Examples:
  nexus index hold --idle 30m
  nexus index hold --stop`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexHold(g, o)
		},
	}
	cmd.Flags().DurationVar(&o.idle, "idle", defaultHold, "exit after this long without a request (0 = until interrupted)")
	cmd.Flags().BoolVar(&o.stop, "stop", false, "stop the running background holder instead of starting one")
	return cmd
}

func runIndexHold(g *globals, o indexHoldOptions) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if o.stop {
		return runIndexHoldStop(g, v)
	}
	// It steps down when 'nexus watch', 'nexus serve' or a newer Nexus
	// asks, and its searches wait for its first catch-up (short: the
	// search that started it had just synced).
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
	// Check every few seconds (a stat and a clock read) so that a deleted
	// vault does not keep a process around.
	tick := 5 * time.Second
	if o.idle > 0 {
		tick = min(tick, max(o.idle/10, 100*time.Millisecond))
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
		if o.idle > 0 && time.Since(ix.LastAsked()) >= o.idle {
			return ix.Close()
		}
		if _, err := vault.Stat(v.MustPath(vault.IndexDir)); err != nil {
			return ix.Close() // the vault was deleted or moved
		}
	}
}

func runIndexHoldStop(g *globals, v *vault.Vault) error {
	pid, stopped, err := index.StopHolder(g.ctx, v, 5*time.Second)
	if err != nil {
		return err
	}
	res := struct {
		HolderPID int  `json:"holder_pid,omitempty"`
		Stopped   bool `json:"stopped"`
	}{pid, stopped}
	if pid != 0 && !stopped {
		return g.emit(res, fmt.Errorf("pid %d holds the search index ('nexus watch' or 'nexus serve') and does not step down for --stop; stop that process instead", pid), nil)
	}
	return g.emit(res, nil, func(w io.Writer) {
		if pid == 0 {
			fmt.Fprintln(w, "No background index holder is running.")
			return
		}
		fmt.Fprintf(w, "Stopped the background index holder (pid %d).\n", pid)
	})
}

// holderPolicy decides whether a search that opened the index itself
// leaves a background holder behind. The two funcs are the seams tests
// replace.
type holderPolicy struct {
	idle     time.Duration
	explicit bool // --hold, $NEXUS_SEARCH_HOLD or search.hold was set
	// interactive reports whether a person watches (stderr is a
	// terminal). Default: isTerminal(g.stderr).
	interactive func() bool
	// start starts the holder. Default: startHolder.
	start func(v *vault.Vault, idle time.Duration) error
}

// holdExplainedFile records that the first background holder was
// explained, so the line is shown once per vault (index folder).
const holdExplainedFile = "hold.explained"

// maybeStart starts the holder when the policy says so, explaining it on
// stderr the first time. Errors are not worth failing a search over: they
// are printed, not returned.
func (p holderPolicy) maybeStart(g *globals, v *vault.Vault) {
	interactive := p.interactive()
	if p.idle <= 0 || (!p.explicit && !interactive) {
		return
	}
	if err := p.start(v, p.idle); err != nil {
		if !g.json {
			fmt.Fprintf(g.stderr, "nexus: %v\n", err)
		}
		return
	}
	if !interactive {
		return
	}
	marker := filepath.Join(v.MustPath(vault.IndexDir), holdExplainedFile)
	if _, err := vault.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		return
	}
	fmt.Fprintf(g.stderr, "nexus: keeping the search index open in the background for %s after the last search, so the next ones are fast ('nexus index hold --stop' ends it; search.hold: off in .nexus/config.yaml turns it off).\n", p.idle)
	_ = vault.WriteFile(marker, []byte("the background index holder was explained on this terminal\n"), 0o644)
}

// startHolder starts 'nexus index hold' in the background, detached from
// this process and its terminal, for the next searches. Its errors go to
// .nexus/index/hold.log.
func startHolder(v *vault.Vault, idle time.Duration) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir), "hold.log")
	// Appended to (two searches may start holders at once; one of them
	// exits at once), and started afresh once it is large.
	flags := os.O_CREATE | os.O_WRONLY | os.O_APPEND
	if st, err := vault.Stat(logPath); err == nil && st.Size() > 1<<20 {
		flags |= os.O_TRUNC
	}
	logf, err := vault.OpenFile(logPath, flags, 0o644)
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
