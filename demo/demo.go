package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/doctor"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

// The demo's agents.
const (
	Lyra = "lyra"
	Ella = "ella"
)

// Options configure [Run]. The zero value plays the whole demo in a new
// folder under the OS temp dir and narrates nowhere.
type Options struct {
	// Dir is the folder to make the vault in. It must not exist or be
	// empty. Empty means a new folder under [os.TempDir].
	Dir string
	// Out receives the narration; nil discards it.
	Out io.Writer
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Appends is how many entries each agent appends at the same instant
	// in the concurrency scene (default 500).
	Appends int
	// Start is the story's first moment, lyra's 02:00 handoff (default
	// 02:00 UTC on 13 January of last year, so every story time is in the
	// past and the log stays in time order when real agents go on).
	Start time.Time
	// Now is the real clock, used for timings and the default Start (nil
	// means time.Now).
	Now func() time.Time
	// Command is how the closing instructions invoke Nexus (default
	// "nexus").
	Command string
	// MCPCommand is the program the closing MCP config runs (default
	// Command): a path, where Command is a 'go run' line.
	MCPCommand string
	// Setup, if not empty, is printed before the closing commands: how
	// to get the nexus they run, when it is not installed.
	Setup string
	// Remove deletes the vault at the end of a successful run if it is a
	// temp folder the demo made (never a Dir vault). A failed run keeps it,
	// to look at.
	Remove bool
}

// Scene is the outcome of one scene.
type Scene struct {
	Title   string        `json:"title"`
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Result is what [Run] did, for the CLI's --json and for tests.
type Result struct {
	// Vault is the absolute path of the vault the demo made.
	Vault string `json:"vault"`
	// Temp is true when the vault is in a folder the demo created under
	// the OS temp dir.
	Temp bool `json:"temp"`
	// URL is where the server listened while the demo ran.
	URL string `json:"url"`
	// Scenes lists the scenes played, in order.
	Scenes []Scene `json:"scenes"`
	// Elapsed is the demo's wall time.
	Elapsed time.Duration `json:"elapsed_ns"`

	// HandoffPath is the log segment holding lyra's 02:00 handoff.
	HandoffPath string `json:"handoff_path"`
	// Decision is the id of the decision that holds; Superseded the id of
	// the one it replaced.
	Decision   string `json:"decision"`
	Superseded string `json:"superseded"`
	// ResumedAt is the migration step lyra resumed at after the crash;
	// Checkpoint the vault-relative path of her final checkpoint.
	ResumedAt  int    `json:"resumed_at"`
	Checkpoint string `json:"checkpoint"`
	// ReviewID is the review item the person approved; Fact the fact file
	// it became.
	ReviewID string `json:"review_id"`
	Fact     string `json:"fact"`
	// Appended is how many entries the concurrency scene appended, and
	// LogEntries how many signed entries the live log holds at the end.
	Appended   int `json:"appended"`
	LogEntries int `json:"log_entries"`
	// Healthy is true when 'nexus doctor' finds nothing in the vault.
	Healthy bool `json:"healthy"`
	// Removed is true when the temp vault was deleted at the end
	// ([Options.Remove]).
	Removed bool `json:"removed"`
	// Tokens are the agents' bearer tokens, for connecting a real agent
	// to a server on this vault (they live only in this demo vault).
	Tokens map[string]string `json:"tokens"`
}

func (o *Options) defaults() {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Appends <= 0 {
		o.Appends = 500
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Start.IsZero() {
		o.Start = time.Date(o.Now().UTC().Year()-1, time.January, 13, 2, 0, 0, 0, time.UTC)
	}
	if o.Command == "" {
		o.Command = "nexus"
	}
	if o.MCPCommand == "" {
		o.MCPCommand = o.Command
	}
}

// demo is one run.
type demo struct {
	opts  Options
	v     *vault.Vault
	clock *storyClock
	n     *narrator
	url   string
	res   *Result
	lyra  *session
	ella  *session
}

// Device is the device name of the demo's vault.
const Device = "demo"

// Run plays the demo. On success the vault stays on disk (the caller
// decides whether to remove a temp one). On failure the error says which
// step failed and the Result says how far it got.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts.defaults()
	started := opts.Now()
	res := &Result{Tokens: map[string]string{}}
	dir, temp, err := prepareDir(opts.Dir)
	if err != nil {
		return res, err
	}
	res.Temp = temp
	v, _, err := vault.Init(dir)
	if err != nil {
		return res, err
	}
	// The demo's vault is new: name its device so that writers, feed
	// files and decision ids read the same on every machine.
	if err := v.SetDevice(Device); err != nil {
		return res, err
	}
	res.Vault = v.Root()
	clock := newStoryClock(opts.Now, opts.Start)
	d := &demo{opts: opts, v: v, clock: clock, n: &narrator{w: opts.Out, clock: clock}, res: res}

	fmt.Fprintf(opts.Out, "Nexus demo: two agents that never talk to each other stay in step through one vault.\nVault: %s\n\n", res.Vault)
	for _, a := range []struct{ name, role, does string }{
		{Lyra, "operations: deploys, on-call, migrations (runs on Hermes)", "operations, the kind of agent one runs on Hermes"},
		{Ella, "research and planning (runs on OpenClaw)", "research and planning, the kind of agent one runs on OpenClaw"},
	} {
		if _, err := agents.Add(v, a.name, a.role, clock.Now()); err != nil {
			return res, err
		}
		tok, err := identity.NewToken(v, a.name, false)
		if err != nil {
			return res, err
		}
		res.Tokens[a.name] = tok
		d.n.say("%s joins: %s. Signing key in .nexus/keys/%s.key, home in agents/%s/.", a.name, a.does, a.name, a.name)
	}

	srv, err := mcpserver.New(mcpserver.Options{Vault: v, Logger: opts.Logger, Now: clock.Now, Version: "demo"})
	if err != nil {
		return res, err
	}
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan string, 1)
	served := make(chan error, 1)
	go func() {
		served <- srv.ListenAndServe(sctx, mcpserver.HTTPOptions{
			Addr:  "127.0.0.1:0",
			Ready: func(a net.Addr) { ready <- a.String() },
		})
	}()
	// shutdown stops the server and waits for it; it runs exactly once.
	shutdown := func() error {
		stop()
		err := <-served
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return errors.Join(err, srv.Close(cctx))
	}
	select {
	case addr := <-ready:
		d.url = "http://" + addr + mcpserver.EndpointPath
	case err := <-served:
		srv.Close(context.Background())
		stop()
		return res, fmt.Errorf("start the MCP server: %w", err)
	}
	res.URL = d.url
	d.n.say("The MCP server listens on %s (Streamable HTTP; each agent's bearer token decides who it is).", d.url)

	err = d.play(ctx)
	if d.lyra != nil {
		d.lyra.close()
	}
	if d.ella != nil {
		d.ella.close()
	}
	if serr := shutdown(); err == nil && serr != nil {
		err = fmt.Errorf("stop the MCP server: %w", serr)
	}
	if err != nil {
		res.Elapsed = opts.Now().Sub(started)
		return res, err
	}

	// The server's index watcher debounces; bring the index up to date with
	// the last writes, as the next 'nexus serve' or search would.
	if err := syncIndex(ctx, v, opts.Logger); err != nil {
		return res, err
	}
	rep, err := doctor.Run(ctx, res.Vault, doctor.Options{Command: opts.Command, LockWait: 200 * time.Millisecond})
	if err != nil {
		return res, err
	}
	res.Healthy = rep.OK
	res.Elapsed = opts.Now().Sub(started)
	d.epilogue(rep)
	if !rep.OK {
		return res, fmt.Errorf("the demo vault does not pass 'nexus doctor': %d finding(s)", len(rep.Findings()))
	}
	if res.Temp && opts.Remove {
		if err := os.RemoveAll(res.Vault); err != nil {
			return res, fmt.Errorf("remove the demo vault: %w", err)
		}
		res.Removed = true
	}
	return res, nil
}

// prepareDir returns the folder to make the vault in, creating a temp
// folder when dir is empty.
func prepareDir(dir string) (string, bool, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "nexus-demo-")
		if err != nil {
			return "", false, fmt.Errorf("make a temp folder: %w", err)
		}
		return d, true, nil
	}
	entries, err := os.ReadDir(dir)
	if err == nil && len(entries) > 0 {
		return "", false, fmt.Errorf("%s: %w", dir, ErrDirNotEmpty)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, err
	}
	return abs, false, nil
}

// syncIndex brings the vault's search index up to date.
func syncIndex(ctx context.Context, v *vault.Vault, log *slog.Logger) error {
	ix, err := index.Open(v, index.Options{Logger: log, NoServe: true, ReconcileEvery: -1})
	if err != nil {
		return fmt.Errorf("open the search index: %w", err)
	}
	err = ix.Sync(ctx)
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("update the search index: %w", err)
	}
	return nil
}
