package mcpserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// EndpointPath is where [Server.Handler] serves Streamable HTTP.
const EndpointPath = "/mcp"

// HTTPOptions configure [Server.ListenAndServe].
type HTTPOptions struct {
	// Addr is host:port to listen on (default 127.0.0.1:7777).
	Addr string
	// TLSCert and TLSKey are PEM files; with both, the server speaks HTTPS.
	TLSCert, TLSKey string
	// InsecureListen allows a non-loopback Addr without TLS (for a trusted
	// proxy that terminates TLS).
	InsecureListen bool
	// Ready, if not nil, is called with the bound address once the server
	// listens (useful with port 0).
	Ready func(addr net.Addr)
	// IdleExit, if positive, shuts the server down as ctx's end would once
	// no request has been in flight for that long: a server a runtime
	// adapter started on demand goes away when its agents are done.
	IdleExit time.Duration
}

// Handler returns the Streamable HTTP handler at [EndpointPath]: every
// request must carry "Authorization: Bearer TOKEN" for a token issued by
// [identity.NewToken] (401 otherwise); bodies over Options.MaxBodyBytes get
// 413. The token's agent is the caller of every tool. Sessions are bound to
// that agent.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(EndpointPath, s.authenticate(s.streamable()))
	return mux
}

func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearer(r.Header.Get("Authorization"))
		agent := ""
		var err error
		if ok {
			agent, err = s.tokens.Check(token)
		}
		if !ok || err != nil {
			s.log.Warn("refused HTTP request", "remote", r.RemoteAddr, "reason", refusal(ok, err))
			w.Header().Set("WWW-Authenticate", `Bearer realm="nexus"`)
			writeJSONError(w, http.StatusUnauthorized, "missing or invalid bearer token: send 'Authorization: Bearer TOKEN' with a token from 'nexus agent token NAME'")
			return
		}
		if r.ContentLength > s.opts.MaxBodyBytes {
			writeJSONError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is %d bytes, more than the %d allowed", r.ContentLength, s.opts.MaxBodyBytes))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		}
		if acceptBareCancel(w, r) {
			return
		}
		r = s.bindSnapshotKey(w, r, agent)
		next.ServeHTTP(w, r.WithContext(withAgent(r.Context(), agent)))
	})
}

func refusal(hadToken bool, err error) string {
	if !hadToken {
		return "no bearer token"
	}
	return err.Error()
}

func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

func writeJSONError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(marshal(map[string]string{"error": msg}))
}

// CheckListenAddr refuses a non-loopback address unless TLS is configured
// or insecure is set ([ErrInsecureListen]).
func CheckListenAddr(addr string, tls, insecure bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: want HOST:PORT: %w", addr, err)
	}
	if tls || insecure || isLoopback(host) {
		return nil
	}
	return fmt.Errorf("%s: %w", addr, ErrInsecureListen)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && ip.IsLoopback()
}

// ListenAndServe serves [Server.Handler] on o.Addr until ctx is done, then
// shuts down gracefully: it stops accepting, lets in-flight requests (and
// their writes) finish for up to 10 seconds, and returns nil.
func (s *Server) ListenAndServe(ctx context.Context, o HTTPOptions) error {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:7777"
	}
	useTLS := o.TLSCert != "" || o.TLSKey != ""
	if useTLS && (o.TLSCert == "" || o.TLSKey == "") {
		return errors.New("pass both --tls-cert and --tls-key")
	}
	if err := CheckListenAddr(o.Addr, useTLS, o.InsecureListen); err != nil {
		return err
	}
	handler := s.Handler()
	idle := newIdleWatch(o.IdleExit)
	if idle != nil {
		handler = idle.wrap(handler)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if useTLS {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return fmt.Errorf("load TLS key pair: %w", err)
		}
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return err
	}
	if useTLS {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	s.log.Info("serving MCP over Streamable HTTP", "addr", ln.Addr().String(), "path", EndpointPath, "tls", useTLS, "vault", s.v.Root())
	if !hasTokens(s.vault()) {
		s.log.Warn("no agent has a token yet, so every request will be refused; issue one with 'nexus agent token NAME'")
	}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var idleDone <-chan struct{}
	if idle != nil {
		stop := make(chan struct{})
		defer close(stop)
		go idle.run(stop)
		idleDone = idle.done
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	case <-idleDone:
		s.log.Info("no request for the idle time: exiting", "idle", o.IdleExit)
	}
	s.log.Info("shutting down: letting in-flight calls finish")
	// Half of the 10 s a stop may take (docs/operations.md): the rest is
	// for Close, which waits for calls still in flight and stops the
	// background indexing.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Long-lived notification streams would hold Shutdown open: end them.
	s.mu.Lock()
	https := s.https
	s.mu.Unlock()
	for _, h := range https {
		h.CloseSessions(sctx)
	}
	err = srv.Shutdown(sctx)
	<-errc
	return err
}

// acceptBareCancel answers 202 to a notifications/cancelled of protocol
// 2026-07-28 or later that carries no _meta protocol version. The official
// Go SDK sends these when a caller gives up on a call, and mcp-go rejects
// them with 400, which makes the SDK close the whole session. Over HTTP in
// that protocol the call is cancelled by the client closing its response
// stream (which cancels the request's context here), so the notification
// has nothing left to do; accepting it keeps the session alive.
func acceptBareCancel(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "notifications/cancelled" || r.Header.Get("Mcp-Protocol-Version") < "2026-07-28" {
		return false
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "notifications/cancelled" || len(msg.ID) > 0 || len(msg.Params.Meta) > 0 {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

func hasTokens(v *vault.Vault) bool {
	for _, a := range v.Config().Agents {
		if a.TokenSHA256 != "" {
			return true
		}
	}
	return false
}

// idleWatch tells when no request has been in flight for a while.
type idleWatch struct {
	after  time.Duration
	done   chan struct{}
	mu     sync.Mutex
	active int       // requests in flight
	last   time.Time // when the last one ended (or the watch began)
}

// newIdleWatch returns a watch for after, or nil when after is not positive.
func newIdleWatch(after time.Duration) *idleWatch {
	if after <= 0 {
		return nil
	}
	return &idleWatch{after: after, done: make(chan struct{}), last: time.Now()}
}

func (w *idleWatch) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.active++
		w.mu.Unlock()
		defer func() {
			w.mu.Lock()
			w.active--
			w.last = time.Now()
			w.mu.Unlock()
		}()
		next.ServeHTTP(rw, r)
	})
}

// run closes w.done once the server has been idle for w.after, or returns
// when stop is closed.
func (w *idleWatch) run(stop <-chan struct{}) {
	t := time.NewTimer(w.after)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		w.mu.Lock()
		wait := w.after - time.Since(w.last)
		busy := w.active > 0
		w.mu.Unlock()
		if !busy && wait <= 0 {
			close(w.done)
			return
		}
		if busy || wait <= 0 {
			wait = w.after // a request in flight (a stream, say): look again later
		}
		t.Reset(wait)
	}
}
