package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Protocol 2026-07-28 is stateless: no initialize, no MCP session, so
// nothing in the protocol says that two requests belong to one client
// session — yet SPEC §2 wants session_start taken once per session. What
// the transport still offers is the Mcp-Session-Id header: the official Go
// SDK (1.8) captures one from any response and sends it back on every
// later request of that connection. So for stateless requests the server
// hands out a snapshot key in that header and keys the frozen render on
// it. The key is an HMAC over the agent, so one agent cannot present
// another's; it is taken off the request before mcp-go sees it (mcp-go
// would look it up as a session of the older protocols). A client that
// does not send the header back gets a fresh render on every request, and
// the result says so (see [snapshotNote]).

// statelessSince is the first protocol version without sessions.
const statelessSince = "2026-07-28"

const snapshotKeyPrefix = "nexus-snap-"

// snapshotKeys mints and checks snapshot keys.
type snapshotKeys struct {
	secret [32]byte
}

func newSnapshotKeys() *snapshotKeys {
	k := &snapshotKeys{}
	rand.Read(k.secret[:])
	return k
}

func (k *snapshotKeys) sign(agent, nonce string) string {
	m := hmac.New(sha256.New, k.secret[:])
	m.Write([]byte(agent + "\x00" + nonce))
	return hex.EncodeToString(m.Sum(nil)[:12])
}

func (k *snapshotKeys) mint(agent string) string {
	var raw [12]byte
	rand.Read(raw[:])
	nonce := hex.EncodeToString(raw[:])
	return snapshotKeyPrefix + nonce + "-" + k.sign(agent, nonce)
}

// valid reports whether id was minted for agent by this server.
func (k *snapshotKeys) valid(id, agent string) bool {
	rest, ok := strings.CutPrefix(id, snapshotKeyPrefix)
	if !ok {
		return false
	}
	nonce, mac, ok := strings.Cut(rest, "-")
	return ok && hmac.Equal([]byte(mac), []byte(k.sign(agent, nonce)))
}

type snapshotKeyCtx struct{}

// snapshotKeyFrom returns the stateless snapshot key bound to ctx, if any.
func snapshotKeyFrom(ctx context.Context) string {
	id, _ := ctx.Value(snapshotKeyCtx{}).(string)
	return id
}

// bindSnapshotKey gives a stateless request its snapshot key: the one it
// carries when this server minted it for agent, else a new one, sent back
// in the Mcp-Session-Id response header. Requests of older protocols
// (which have real sessions) pass unchanged.
func (s *Server) bindSnapshotKey(w http.ResponseWriter, r *http.Request, agent string) *http.Request {
	if v := r.Header.Get("Mcp-Protocol-Version"); v < statelessSince {
		return r
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" && !strings.HasPrefix(id, snapshotKeyPrefix) {
		return r // not ours: leave it to the transport
	}
	if id == "" || !s.snapKeys.valid(id, agent) {
		if id != "" {
			// A key minted for another agent (or by an earlier run of the
			// server): the client must not get a mismatching id back, so
			// this request goes without a frozen snapshot.
			r = r.Clone(r.Context())
			r.Header.Del("Mcp-Session-Id")
			return r
		}
		id = s.snapKeys.mint(agent)
	}
	w.Header().Set("Mcp-Session-Id", id)
	r = r.Clone(context.WithValue(r.Context(), snapshotKeyCtx{}, id))
	r.Header.Del("Mcp-Session-Id")
	return r
}

// frozenRender is one session's session-start render.
type frozenRender struct {
	text string
	at   time.Time
}

// frozenTTL is how long a stateless session's snapshot is kept after it
// was taken: there is no end of session to drop it on.
const frozenTTL = 12 * time.Hour

// sweepFrozen drops stateless snapshots older than frozenTTL; at most
// once a minute.
func (s *Server) sweepFrozen(now time.Time) {
	s.sweepMu.Lock()
	if now.Sub(s.swept) < time.Minute {
		s.sweepMu.Unlock()
		return
	}
	s.swept = now
	s.sweepMu.Unlock()
	s.frozen.Range(func(k, v any) bool {
		if id, _ := k.(string); strings.HasPrefix(id, snapshotKeyPrefix) && now.Sub(v.(frozenRender).at) > frozenTTL {
			s.frozen.Delete(k)
		}
		return true
	})
}

// sweepState is embedded in Server.
type sweepState struct {
	sweepMu sync.Mutex
	swept   time.Time
}

// snapshotNote is added to a session_start taken without any session or
// snapshot key: the next request renders afresh.
const snapshotNote = "taken now: this connection carries no session (stateless protocol " + statelessSince + " and no Mcp-Session-Id sent back), so every request renders it afresh — load it once at the start of your session and keep it"
