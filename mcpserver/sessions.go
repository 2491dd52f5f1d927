package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// sessionBinder issues HTTP session IDs bound to the agent whose token
// opened the session: a session ID presented with another agent's token is
// not found, so no agent can ride on (or end) another's session.
type sessionBinder struct {
	mu    sync.Mutex        // protects owner
	owner map[string]string // session ID -> agent
	// ended is called with the ID of a session that was terminated (by
	// the client's DELETE or by idling out).
	ended func(id string)
}

func newSessionBinder(ended func(id string)) *sessionBinder {
	return &sessionBinder{owner: map[string]string{}, ended: ended}
}

// ResolveSessionIdManager returns the session manager for the agent of r
// (all sessions when r is nil: the transport's own housekeeping).
//
//lint:ignore ST1003 the name is mcp-go's (server.SessionIdManagerResolver)
func (b *sessionBinder) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	agent := ""
	if r != nil {
		agent, _ = agentFrom(r.Context())
		if agent == "" {
			agent = "\x00none" // unauthenticated requests never reach here; be safe anyway
		}
	}
	return agentSessions{b: b, agent: agent}
}

// sessionCount returns how many sessions are open (for tests).
func (b *sessionBinder) sessionCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.owner)
}

const sessionPrefix = "nexus-"

var errSessionNotFound = errors.New("session not found")

type agentSessions struct {
	b     *sessionBinder
	agent string // "" for housekeeping, which sees every session
}

func (m agentSessions) Generate() string {
	var raw [16]byte
	rand.Read(raw[:])
	id := sessionPrefix + hex.EncodeToString(raw[:])
	m.b.mu.Lock()
	m.b.owner[id] = m.agent
	m.b.mu.Unlock()
	return id
}

func (m agentSessions) Validate(id string) (isTerminated bool, err error) {
	if !strings.HasPrefix(id, sessionPrefix) {
		return false, errSessionNotFound
	}
	m.b.mu.Lock()
	owner, ok := m.b.owner[id]
	m.b.mu.Unlock()
	if !ok || (m.agent != "" && owner != m.agent) {
		return false, errSessionNotFound
	}
	return false, nil
}

func (m agentSessions) Terminate(id string) (isNotAllowed bool, err error) {
	m.b.mu.Lock()
	owner, ok := m.b.owner[id]
	if !ok {
		m.b.mu.Unlock()
		return false, nil
	}
	if m.agent != "" && owner != m.agent {
		m.b.mu.Unlock()
		return true, nil
	}
	delete(m.b.owner, id)
	m.b.mu.Unlock()
	if m.b.ended != nil {
		m.b.ended(id)
	}
	return false, nil
}
