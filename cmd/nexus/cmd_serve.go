//go:build !lite

package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/internal/version"
	"github.com/nexus-memory/nexus/mcpserver"
)

func init() { register("serve", newServeCmd) }

// serveOptions are the flags of 'nexus serve'.
type serveOptions struct {
	stdio          bool
	http           string
	tlsCert        string
	tlsKey         string
	insecureListen bool
	logLevel       string
	idle           time.Duration
	memory         string
}

func newServeCmd(g *globals) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--stdio | --http ADDR]",
		Short: "Serve the vault to AI agents over MCP (stdio or Streamable HTTP)",
		Long: `Serve the vault over the Model Context Protocol: the tools memory,
fact_write, fact_read, fact_remove, memory_search, memory_get, log_read,
log_append, decision_record, decision_list, checkpoint_save, checkpoint_load
and retain; the session_start prompt; and the vault's markdown notes as
resources (the live log is subscribable).

--stdio (the default) serves one agent, named by --agent or $NEXUS_AGENT:
this is what an MCP client's config launches. Stdout carries the protocol;
logs go to stderr.

--http ADDR serves several agents over Streamable HTTP at http://ADDR/mcp.
Every request must carry "Authorization: Bearer TOKEN", a token made by
'nexus agent token NAME'; the token decides the agent. ADDR must be a
loopback address unless --tls-cert/--tls-key are given or --insecure-listen
is passed (for a trusted TLS-terminating proxy).

SIGINT/SIGTERM shut down gracefully within 10 seconds: calls in flight
finish their writes; search indexing still under way stops (it resumes at
the next start). With --idle the HTTP server also shuts down once no
request has come for that long (a server the runtime adapters start on
demand uses 10m).

--memory SIZE (default 128MiB) is about how much memory the server may
use: the Go heap's soft limit (unless $GOMEMLIMIT is set), and a quarter
of it sizes the search index's batches. Past the limit the server collects
garbage more often rather than grow; it is a soft limit, so a burst that
needs more still gets it. A hub with many clients and a big log can be
given more (256MiB, 1GiB) to spend less CPU on collection.

Examples:
  nexus --agent lyra serve --stdio
  nexus agent token lyra && nexus serve --http 127.0.0.1:7777
  nexus serve --http 127.0.0.1:0 --idle 10m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(g, o) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.stdio, "stdio", false, "serve one agent (--agent) on stdin/stdout (default)")
	f.StringVar(&o.http, "http", "", "serve Streamable HTTP on ADDR (host:port), bearer-token authenticated")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate file for HTTPS")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key file for HTTPS")
	f.BoolVar(&o.insecureListen, "insecure-listen", false, "allow plain HTTP on a non-loopback address")
	f.StringVar(&o.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	f.DurationVar(&o.idle, "idle", 0, "with --http: exit after this long without a request (0: never)")
	f.StringVar(&o.memory, "memory", "128MiB", "about how much memory the server may use (heap soft limit, index batches)")
	return cmd
}

// shutdownBudget is how long serve takes at most to stop once asked
// (under the 10 s docs/operations.md promises).
const shutdownBudget = 8 * time.Second

// serveReady lets tests learn the HTTP address; nil in production.
var serveReady func(net.Addr)

func runServe(g *globals, o serveOptions) error {
	if o.stdio && o.http != "" {
		return usagef("pass either --stdio or --http ADDR, not both")
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	if o.http == "" && (o.tlsCert != "" || o.tlsKey != "" || o.insecureListen || o.idle != 0) {
		return usagef("--tls-cert, --tls-key, --insecure-listen and --idle go with --http")
	}
	if o.idle < 0 {
		return usagef("--idle %s: want a duration of 0 or more", o.idle)
	}
	budget, err := parseBytes(o.memory)
	if err != nil || budget < 32<<20 {
		return usagef("--memory %q: want a size of at least 32MiB, such as 128MiB or 1GiB", o.memory)
	}
	var agent string
	if o.http == "" {
		a, err := g.agentName()
		if err != nil {
			return err
		}
		agent = a
	} else if err := mcpserver.CheckListenAddr(o.http, o.tlsCert != "" || o.tlsKey != "", o.insecureListen); err != nil {
		return usagef("%v", err)
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(g.stderr, &slog.HandlerOptions{Level: level}))
	srv, err := mcpserver.New(mcpserver.Options{Vault: v, Logger: logger, Now: g.now, Version: version.String(), MemoryBudget: budget})
	if err != nil {
		return err
	}
	// The heap's soft limit is process-wide, so it is set here, not in
	// mcpserver; $GOMEMLIMIT, when set, wins.
	if os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(budget))
	}
	if o.http != "" && g.agent != "" {
		logger.Info("--agent is ignored with --http: each request's bearer token names its agent", "agent", g.agent)
	}
	ctx := g.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	// A stop (SIGINT, SIGTERM) is honoured within 10 s: the shutdown has
	// shutdownBudget from the signal, whatever the server was doing.
	stopAt := make(chan time.Time, 1)
	defer context.AfterFunc(ctx, func() { stopAt <- time.Now() })()
	if o.http != "" {
		err = srv.ListenAndServe(ctx, mcpserver.HTTPOptions{
			Addr: o.http, TLSCert: o.tlsCert, TLSKey: o.tlsKey, InsecureListen: o.insecureListen, Ready: serveReady, IdleExit: o.idle,
		})
	} else {
		stdin, stdout := g.stdin, g.stdout
		if stdin == nil {
			stdin = os.Stdin
		}
		ignoreSIGPIPE()
		err = srv.ServeStdio(ctx, agent, stdin, stdout)
	}
	deadline := time.Now().Add(shutdownBudget)
	select {
	case t := <-stopAt:
		deadline = t.Add(shutdownBudget)
	default:
	}
	cctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if cerr := srv.Close(cctx); cerr != nil && err == nil {
		err = fmt.Errorf("shut down: %w", cerr)
	}
	return err
}
