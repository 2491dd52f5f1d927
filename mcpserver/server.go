package mcpserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/conflicts"
	"github.com/nexus-memory/nexus/curator"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/internal/version"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// Options configure a [Server].
type Options struct {
	// Vault is the vault to serve. Required.
	Vault *vault.Vault
	// Logger receives the server's logs; nil discards them. On stdio it
	// must not write to stdout, which carries the protocol.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Version is reported to clients as the server version (serverInfo);
	// empty means the nexus module's version from the build information,
	// as 'nexus version' prints it.
	Version string
	// LogPollInterval is how often the live log is checked for appends by
	// other processes, to notify subscribers (default 250ms).
	LogPollInterval time.Duration
	// MaxBodyBytes bounds an HTTP request body (default 4 MiB: twice the
	// largest tool arguments). Larger requests get 413 before they are read.
	MaxBodyBytes int64
	// KeeperEvery is how often the server carries out review decisions a
	// person made in Obsidian (status: approved/rejected) and brings memory
	// indexes in step with hand-edited fact files (a [retention.Keeper];
	// default 3s). Negative turns it off, for a vault already served by
	// 'nexus watch'.
	KeeperEvery time.Duration
	// MemoryBudget is about how much memory the server may use, in bytes
	// (default [DefaultMemoryBudget]). A quarter of it sizes the search
	// index's batches (index.Options.MemoryBudget), where a hub's memory
	// goes when many entries arrive at once. The heap's soft limit is a
	// process-wide setting, so it is the program's to set:
	// 'nexus serve --memory' sets it to this budget.
	MemoryBudget int64
}

// DefaultMemoryBudget is Options.MemoryBudget's default, and the default
// of 'nexus serve --memory'.
const DefaultMemoryBudget = 128 << 20

// Server serves one vault over MCP. Create it with [New], serve it with
// [Server.ServeStdio] or [Server.Handler]/[Server.ListenAndServe], and stop
// it with [Server.Close]. Its methods are safe for concurrent use; tool
// calls run concurrently, each writing through the domain packages' locks.
type Server struct {
	v      *vault.Vault
	log    *slog.Logger
	now    func() time.Time
	mcp    *server.MCPServer
	tokens *identity.TokenChecker
	opts   Options
	subs   *subscriptions
	res    *resourceList
	lg     *livelog.Log
	unread unreadCache
	live   *liveVault

	keeper *retention.Keeper // nil when Options.KeeperEvery < 0

	// frozen holds each MCP session's session-start render, by session
	// id: it is taken once per session (SPEC §2).
	frozen sync.Map // session or snapshot key -> frozenRender
	sweepState
	// snapKeys mint the snapshot keys of stateless sessions.
	snapKeys *snapshotKeys

	// ixMu protects ix, the search index (nil until opened).
	ixMu sync.Mutex
	ix   *index.Index
	// searchers holds the [hybrid.Searcher] of each index the server
	// searched (it loads the model and the vectors once).
	searchers sync.Map // *index.Index → *hybrid.Searcher

	// mu protects closing, inflight, idle and https.
	mu sync.Mutex
	// inflight counts tool calls under way, so Close lets writes finish.
	inflight int
	// idle is made when Close begins and closed once no call is in flight:
	// Close waits on it without a goroutine of its own that could outlive it.
	idle    chan struct{}
	closing bool
	https   []*server.StreamableHTTPServer

	ctx    context.Context // cancelled by Close; owns the background loops
	cancel context.CancelFunc
	loops  sync.WaitGroup
	// background counts other work started by calls that outlives them
	// (an unread count); added to under mu while not closing.
	background sync.WaitGroup
	// count is the unread count (the log's; tests slow it down).
	count func(agent string) (int, map[string]int, error)
	// smallLog is noticeSmallLog (tests lower it).
	smallLog int64
}

// New builds a server for opts.Vault with every tool, the session_start
// prompt and the vault resources registered, and starts its live-log
// watcher. Call [Server.Close] when done.
func New(opts Options) (*Server, error) {
	if opts.Vault == nil {
		return nil, errorf("mcpserver: Options.Vault is nil")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = version.String()
	}
	if opts.LogPollInterval <= 0 {
		opts.LogPollInterval = 250 * time.Millisecond
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = DefaultMemoryBudget
	}
	// The server works on its own handle of the vault: a caller that goes on
	// using (and reconfiguring) its handle does not race with the server.
	own, err := vault.Open(opts.Vault.Root())
	if err != nil {
		return nil, err
	}
	opts.Vault = own
	s := &Server{
		v:      opts.Vault,
		log:    opts.Logger,
		now:    opts.Now,
		tokens: identity.NewTokenChecker(opts.Vault),
		opts:   opts,
		subs:   newSubscriptions(),
		live:   newLiveVault(opts.Vault),

		snapKeys: newSnapshotKeys(),
	}
	lg, err := livelog.Open(own, livelog.Options{Now: opts.Now, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	s.lg = lg
	s.count = lg.UnreadCount
	s.smallLog = noticeSmallLog
	s.ctx, s.cancel = context.WithCancel(context.Background())
	hooks := &server.Hooks{}
	s.subs.install(hooks)
	s.mcp = server.NewMCPServer("nexus", opts.Version,
		server.WithTitle("Nexus shared agent memory"),
		server.WithInstructions(instructions),
		server.WithToolCapabilities(false),
		server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithHooks(hooks),
		server.WithResourceRecovery(),
		server.WithPaginationLimit(1000),
	)
	for _, t := range s.tools() {
		s.mcp.AddTool(t.def, s.handler(t.def.Name, t.run))
	}
	s.addPrompts()
	s.addResources(hooks)
	if opts.KeeperEvery >= 0 {
		s.keeper = retention.StartKeeper(s.ctx, opts.Vault, retention.KeeperOptions{Every: opts.KeeperEvery, Now: opts.Now, Logger: opts.Logger,
			Before: conflicts.Keep, After: new(curator.Auto).Run}) // sync conflicts first, the curator's automatic passes last
	}
	s.loops.Add(2)
	go func() {
		defer s.loops.Done()
		s.watchLiveLog(s.ctx)
	}()
	go func() {
		defer s.loops.Done()
		s.keepIndex(s.ctx)
	}()
	return s, nil
}

// instructions are sent to clients at initialize; many put them in the
// model's system prompt.
const instructions = `Nexus is the shared, durable memory of the agents you work with, kept as markdown that people also edit.
- At the start of a session read the session_start prompt (or the nexus://session/start resource): your identity, bounded memory, user profile, memory index, unread log entries, checkpoint and decisions.
- When a tool result ends with "N new log entries from ... — call log_read", call log_read before you reply.
- Keep MEMORY.md/USER.md small with the memory tool; put durable facts in fact files (fact_write); record decisions with decision_record; save a checkpoint during long work.
- Find things with memory_search, then read them with memory_get.`

// enter registers a tool call; it returns false once Close has begun.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.inflight++
	return true
}

// startBackground registers work that outlives the call that starts it
// (call s.background.Done when it ends); false once Close has begun.
func (s *Server) startBackground() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.background.Add(1)
	return true
}

// leave ends a call registered by enter.
func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inflight--
	if s.closing && s.inflight == 0 {
		closeOnce(s.idle)
	}
}

// closeOnce closes ch unless it is closed already; callers hold s.mu.
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// Close stops accepting tool calls, waits for the ones in flight (their
// writes complete; ctx bounds the wait), ends HTTP sessions and stops the
// background loops. It is safe to call more than once.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closing {
		s.closing = true
		s.idle = make(chan struct{})
	}
	if s.inflight == 0 {
		closeOnce(s.idle)
	}
	idle := s.idle
	https := s.https
	s.https = nil
	s.mu.Unlock()
	var err error
	select {
	case <-idle:
	case <-ctx.Done():
		err = ctx.Err()
	}
	for _, h := range https {
		if herr := h.Shutdown(ctx); herr != nil && err == nil {
			err = herr
		}
	}
	s.cancel()
	// Background indexing stops at its next batch; ctx bounds the wait
	// (SIGTERM is honoured within 10 s however big the log). Past it the
	// index is left as it is, still locked by the indexing: it is derived
	// state, caught up at the next start.
	stopped := make(chan struct{})
	go func() {
		s.loops.Wait()
		s.background.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-ctx.Done():
		if err == nil {
			err = fmt.Errorf("background work still running: %w", ctx.Err())
		}
		return err
	}
	if s.keeper != nil {
		s.keeper.Close()
	}
	s.ixMu.Lock()
	if s.ix != nil {
		if cerr := s.ix.Close(); cerr != nil && err == nil {
			err = cerr
		}
		s.ix = nil
	}
	s.ixMu.Unlock()
	agents.Recall(s.vault()).Flush() // recall signals buffered in this process
	return err
}

// streamable builds the Streamable HTTP transport for s, owned by s (Close
// shuts it down).
func (s *Server) streamable() *server.StreamableHTTPServer {
	h := server.NewStreamableHTTPServer(s.mcp,
		server.WithSessionIdManagerResolver(newSessionBinder(func(id string) { s.subs.removeKey("id:" + id); s.frozen.Delete(id) })),
		server.WithStreamableHTTPLogger(s.log),
		server.WithSessionIdleTTL(time.Hour),
		server.WithHeartbeatInterval(30*time.Second),
	)
	s.mu.Lock()
	s.https = append(s.https, h)
	s.mu.Unlock()
	return h
}

var _ http.Handler = (*server.StreamableHTTPServer)(nil)
