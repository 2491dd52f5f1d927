package index

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/index/holder"
	"github.com/nexus-memory/nexus/vault"
)

// listenSock listens on dir's holder socket, replacing a stale one (the
// caller holds the index, so no other holder is using it).
func listenSock(dir string) (net.Listener, error) {
	path := filepath.Join(dir, holder.SockFile)
	if len(path) > holder.MaxSockPath {
		return nil, fmt.Errorf("socket path %s is longer than %d bytes", path, holder.MaxSockPath)
	}
	vault.Remove(path)
	return net.Listen("unix", path)
}

// holderVersion is the version a holder of this index announces: the
// index schema times 100 plus the wire's own version (TestHolderVersion
// keeps holder.Version equal to it).
const holderVersion = holder.Version

// server answers for a held index on loopback TCP (the same on Linux, macOS
// and Windows; a random token in a 0600 file keeps other users out).
type server struct {
	ix    *Index
	ln    net.Listener
	sock  net.Listener // nil when the socket could not be made
	hs    *http.Server
	token string
	path  string
	wg    sync.WaitGroup
}

func startServer(ix *Index) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		ln.Close()
		return nil, err
	}
	s := &server{ix: ix, ln: ln, token: hex.EncodeToString(tok), path: filepath.Join(ix.dir, serveFile)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /search", s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
		var q Query
		if err := json.Unmarshal(body, &q); err != nil {
			return nil, err
		}
		if serveSearchHook != nil {
			serveSearchHook()
		}
		if !ix.watching.Load() && !ix.rebuilding.Load() {
			// This process holds the index for a job of its own (a
			// one-off search, still indexing the vault perhaps) and does
			// not watch the files: check them first, as the caller would
			// have, or it is told of an index half filled. A rebuild is
			// answered from the index as it is, as a watcher does.
			if err := ix.Sync(ctx); err != nil {
				return nil, err
			}
		}
		return ix.Search(ctx, q)
	}))
	mux.HandleFunc("POST /ping", s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
		return struct{}{}, nil
	}))
	mux.HandleFunc("POST /yield", func(w http.ResponseWriter, r *http.Request) {
		agreed := false
		s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
			agreed = ix.opts.Yield
			return agreed, nil
		})(w, r)
		// Only once the answer is out: the holder closes its connections
		// as it steps down, and would otherwise cut its own answer short.
		if agreed {
			ix.yieldOnce.Do(func() { close(ix.yielded) })
		}
	})
	mux.HandleFunc("POST /status", s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
		return ix.Status(ctx)
	}))
	mux.HandleFunc("POST /sync", s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
		return struct{}{}, ix.Sync(ctx)
	}))
	mux.HandleFunc("POST /notify", s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
		var paths []string
		if err := json.Unmarshal(body, &paths); err != nil {
			return nil, err
		}
		ix.Notify(paths...)
		return struct{}{}, nil
	}))
	mux.HandleFunc("POST /rebuild", s.handle(func(ctx context.Context, body []byte, progress func(Progress)) (any, error) {
		return struct{}{}, ix.Rebuild(ctx, progress)
	}))
	s.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	if sock, err := listenSock(ix.dir); err == nil {
		s.sock = sock
	} else {
		ix.opts.Logger.Debug("search index: answering on loopback TCP only", "err", err)
	}
	info, _ := json.Marshal(holder.Info{Addr: ln.Addr().String(), Token: s.token, PID: os.Getpid(), Version: holderVersion, Yields: ix.opts.Yield, Sock: s.sock != nil, KeepAliveMS: int(keepAliveInterval.Milliseconds())})
	if err := vault.WriteFile(s.path, info, 0o600); err != nil {
		ln.Close()
		if s.sock != nil {
			s.sock.Close()
		}
		return nil, err
	}
	for _, l := range []net.Listener{ln, s.sock} {
		if l == nil {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.hs.Serve(l)
		}()
	}
	return s, nil
}

// keepAliveInterval is how often a holder sends a keep-alive line while
// it works on a request (a variable for tests). serve.json announces it;
// a client gives up on a holder silent for ten of them.
var keepAliveInterval = time.Second

// serveSearchHook, when not nil, is called as the holder starts a search
// (tests slow it down).
var serveSearchHook func()

// handle answers a request with f, as a stream of JSON lines
// ([holder.Reply]): the response header at once, progress lines as f
// reports them, a keep-alive line every keepAliveInterval while f works,
// then the result or the error. The client takes the header and each line
// as a sign of life, so a long job (a rebuild, catching up on a big
// vault) is not taken for a hung holder.
func (s *server) handle(f func(ctx context.Context, body []byte, progress func(Progress)) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != "/ping" && r.URL.Path != "/yield" {
			// Checking that a holder is there is not using it: a
			// waiting 'nexus watch' pings every few seconds.
			s.ix.lastAsked.Store(time.Now().UnixNano())
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		rw := &replyWriter{w: w, rc: http.NewResponseController(w), enc: json.NewEncoder(w)}
		rw.start()
		stop := make(chan struct{})
		beating := make(chan struct{})
		go func() {
			defer close(beating)
			t := time.NewTicker(keepAliveInterval)
			defer t.Stop()
			for {
				select {
				case <-stop:
					return
				case <-t.C:
					if rw.send(holder.Reply{Alive: true, Error: holder.AliveError}) != nil {
						return // the client went away
					}
				}
			}
		}()
		res, err := f(r.Context(), body, func(p Progress) { rw.send(holder.Reply{Progress: &p}) })
		close(stop)
		<-beating // w is not to be used once the handler returns
		var rep holder.Reply
		if err != nil {
			rep.Error = err.Error()
			rep.Invalid = errors.Is(err, vault.ErrInvalid)
		} else {
			rep.Result, _ = json.Marshal(res)
		}
		rw.send(rep)
	}
}

// replyWriter writes the lines of one reply, each whole and flushed at
// once: the keep-alive goroutine and the handler's progress calls write
// concurrently.
type replyWriter struct {
	mu  sync.Mutex // serialises writes to w
	w   http.ResponseWriter
	rc  *http.ResponseController
	enc *json.Encoder
}

// start sends the response header.
func (rw *replyWriter) start() {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	rw.w.WriteHeader(http.StatusOK)
	rw.rc.Flush()
}

// send writes one line.
func (rw *replyWriter) send(rep holder.Reply) error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if err := rw.enc.Encode(rep); err != nil {
		return err
	}
	return rw.rc.Flush()
}

func (s *server) close() {
	s.hs.Close()
	s.wg.Wait()
	if s.sock != nil {
		// This process still holds the index, so no later holder has
		// made its socket yet.
		vault.Remove(filepath.Join(s.ix.dir, holder.SockFile))
	}
	// serve.json is left in place: a later holder may already have
	// replaced it (removing it could delete that holder's), and a stale
	// one is harmless: nobody answers there, so openers hold the index
	// themselves.
}

// client asks the holder.
type client struct{ *holder.Client }

// dialHolder reads serve.json and checks that the holder answers.
func dialHolder(dir string) (*client, error) {
	c, err := holder.Dial(dir)
	if err != nil {
		return nil, err
	}
	return &client{c}, nil
}

func (c *client) close() { c.Close() }

func (c *client) call(ctx context.Context, op string, in, out any, progress func(Progress)) error {
	return c.Call(ctx, op, in, out, progress)
}

func (c *client) search(ctx context.Context, q Query) (*Results, error) { return c.Search(ctx, q) }

func (c *client) yield(ctx context.Context) (bool, error) {
	var ok bool
	err := c.call(ctx, "yield", struct{}{}, &ok, nil)
	return ok, err
}

// AskHolderToYield asks the process holding the index to step down, which
// a holder opened with Options.Yield does (it then closes the index, and
// the next Open takes it). It reports whether the holder agreed; false
// when this process holds the index itself.
func (ix *Index) AskHolderToYield(ctx context.Context) (bool, error) {
	c := ix.remoteOrTakeover()
	if c == nil {
		return false, nil
	}
	return c.yield(ctx)
}

// Yielded is closed when another process asks this holder to step down
// (Options.Yield only).
func (ix *Index) Yielded() <-chan struct{} { return ix.yielded }

// LastAsked is when another process last asked this holder to search,
// sync, index or report, or when this process took the index if nobody
// has asked yet; a bare check that the holder is there does not count. A
// holder that serves nobody can use it to stop (see 'nexus index hold').
func (ix *Index) LastAsked() time.Time {
	return time.Unix(0, ix.lastAsked.Load())
}

// HolderPID is the process holding the index: this one, or the one that
// answers for it.
func (ix *Index) HolderPID() int {
	if c := ix.remoteOrTakeover(); c != nil {
		return c.Info().PID
	}
	return os.Getpid()
}

func (c *client) status(ctx context.Context) (Status, error) {
	var st Status
	err := c.call(ctx, "status", struct{}{}, &st, nil)
	return st, err
}

func (c *client) sync(ctx context.Context) error { return c.call(ctx, "sync", struct{}{}, nil, nil) }

func (c *client) notify(ctx context.Context, paths []string) error {
	return c.call(ctx, "notify", paths, nil, nil)
}

func (c *client) rebuild(ctx context.Context, progress func(Progress)) error {
	return c.call(ctx, "rebuild", struct{}{}, nil, progress)
}

func isConnErr(err error) bool { return holder.IsConnError(err) }

// viaHolder asks the process that holds the index, when another one
// does, with call, and reports whether it did (remote): false means this
// process holds the index and the caller answers itself.
//
// A call that could not reach the holder or found it silent (a
// [holder.ConnError]) is made once more after [Index.takeover], which
// holds the index here (then remote is false) or reaches the holder that
// took it. Once only: that is the case it is for, a holder that went away
// between two calls, and a holder that answers the ping but fails every
// call would otherwise be asked again for ever. Not at all when the
// caller gave up (a ConnError from its own cancelled context, a Ctrl-C,
// is not the holder's fault).
func viaHolder[T any](ctx context.Context, ix *Index, call func(*client) (T, error)) (res T, remote bool, err error) {
	for retried := false; ; retried = true {
		c := ix.remoteOrTakeover()
		if c == nil {
			return res, false, nil
		}
		res, err = call(c)
		if retried || !isConnErr(err) || ctx.Err() != nil || !ix.takeover() {
			return res, true, err
		}
	}
}

func (ix *Index) remoteOrTakeover() *client {
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	return ix.remote
}

// takeover tries to hold the index after the holder went away. It reports
// whether this process now holds it, or reaches a new holder.
//
// It also follows a holder that stopped answering mid-call: a call gives
// up (a [holder.ConnError]) once the holder has sent nothing — no header,
// progress or keep-alive line — for ten keep-alive intervals (10 s). A
// stopped or hung holder still has the index's lock, so openLocal fails
// after Options.OpenTimeout, and it does not answer the ping either, so
// the caller gets that ConnError ("index holder (pid N) sent nothing for
// 10s") rather than a hang, about 13 s after the holder fell silent (one
// 3 s ping: a socket that is not answered is not tried again over TCP).
// A live holder is never taken over this way, however long its work: its
// keep-alives come from their
// own goroutine, every second, whatever the handler is doing; and a
// holder that answers the ping is asked again, not taken over (the lock
// is its). A holder of an older Nexus announces no keep-alives, and a
// call to it has no idle bound, as before.
func (ix *Index) takeover() bool {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.isClosed() {
		return false
	}
	ix.bmu.RLock()
	old := ix.remote
	ix.bmu.RUnlock()
	if old == nil {
		return true // taken over already
	}
	if err := ix.openLocal(); err == nil {
		// Catch up with what changed while the old holder was going away.
		if err := ix.syncLocked(context.Background(), nil, nil); err != nil {
			ix.warn(fmt.Sprintf("catch up after taking the index over: %v", err))
		}
		if ix.startCtx != nil && ix.startCtx.Err() == nil {
			if err := ix.startWatcher(ix.startCtx); err != nil {
				ix.warn(err.Error())
			}
		}
		return true
	}
	c, err := dialHolder(ix.dir)
	if err != nil {
		return false
	}
	ix.bmu.Lock()
	ix.remote = c
	ix.bmu.Unlock()
	old.close()
	return true
}

// StopHolder asks the process holding v's index to step down, without
// opening the index. A background holder ('nexus index hold', opened
// with Options.Yield) agrees and closes the index; 'nexus watch' and
// 'nexus serve' do not. It returns the holder's PID (0 when no process
// answers for the index) and whether it agreed, and waits up to wait for
// an agreeing holder to stop answering.
func StopHolder(ctx context.Context, v *vault.Vault, wait time.Duration) (pid int, stopped bool, err error) {
	dir := filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir))
	c, err := dialHolder(dir)
	if err != nil {
		return 0, false, nil // nobody answers: nothing to stop
	}
	defer c.close()
	pid = c.Info().PID
	ok, err := c.yield(ctx)
	if isConnErr(err) && c.Info().Yields && ctx.Err() == nil {
		// The connection broke before the answer came: a holder that
		// steps down closes its connections as it exits, and one of an
		// older Nexus could do so before its answer was out. It stopped
		// if it no longer answers.
		if holderGone(ctx, c, wait) {
			return pid, true, nil
		}
		return pid, false, err
	}
	if err != nil || !ok {
		return pid, false, err
	}
	holderGone(ctx, c, wait)
	return pid, true, nil
}

// holderGone waits up to wait for the holder behind c to stop answering,
// and reports whether it did.
func holderGone(ctx context.Context, c *client, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if c.call(ctx, "ping", struct{}{}, nil, nil) != nil {
			return ctx.Err() == nil
		}
		if !time.Now().Before(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}
