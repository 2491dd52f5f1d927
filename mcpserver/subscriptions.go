package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// subscriptions records which sessions subscribed to which resource URIs.
// Sessions of protocol versions before 2026-07-28 subscribe with
// resources/subscribe and are notified by session ID; newer ones open a
// subscriptions/listen stream and are notified on it while it lasts.
type subscriptions struct {
	mu    sync.Mutex                        // protects byURI
	byURI map[string]map[string]*subscriber // URI -> key -> subscriber
}

type subscriber struct {
	sessionID string               // legacy: notify through the server by ID
	stream    server.ClientSession // modern: notify on this listen stream
	agent     string               // who subscribed ("" if unknown)
}

func newSubscriptions() *subscriptions {
	return &subscriptions{byURI: map[string]map[string]*subscriber{}}
}

func (ss *subscriptions) add(uri, key string, sub *subscriber) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	m := ss.byURI[uri]
	if m == nil {
		m = map[string]*subscriber{}
		ss.byURI[uri] = m
	}
	m[key] = sub
}

func (ss *subscriptions) remove(uri, key string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byURI[uri], key)
	if len(ss.byURI[uri]) == 0 {
		delete(ss.byURI, uri)
	}
}

func (ss *subscriptions) removeKey(key string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for uri, m := range ss.byURI {
		delete(m, key)
		if len(m) == 0 {
			delete(ss.byURI, uri)
		}
	}
}

// count returns how many subscriptions exist (for tests).
func (ss *subscriptions) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := 0
	for _, m := range ss.byURI {
		n += len(m)
	}
	return n
}

// install hooks the subscription requests of the MCP server.
func (ss *subscriptions) install(h *server.Hooks) {
	h.AddBeforeSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil && sess.SessionID() != "" {
			agent, _ := agentFrom(ctx)
			ss.add(req.Params.URI, "id:"+sess.SessionID(), &subscriber{sessionID: sess.SessionID(), agent: agent})
		}
	})
	h.AddBeforeUnsubscribe(func(ctx context.Context, _ any, req *mcp.UnsubscribeRequest) {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			ss.remove(req.Params.URI, "id:"+sess.SessionID())
		}
	})
	h.AddOnUnregisterSession(func(ctx context.Context, sess server.ClientSession) {
		ss.removeKey("id:" + sess.SessionID())
	})
	h.AddBeforeSubscriptionsListen(func(ctx context.Context, _ any, req *mcp.SubscriptionsListenRequest) {
		sess := server.ClientSessionFromContext(ctx)
		uris := req.Params.Notifications.ResourceSubscriptions
		if sess == nil || len(uris) == 0 {
			return
		}
		key := fmt.Sprintf("stream:%p", sess)
		agent, _ := agentFrom(ctx)
		for _, uri := range uris {
			ss.add(uri, key, &subscriber{stream: sess, agent: agent})
		}
		// The stream lasts as long as the request; so does the record.
		context.AfterFunc(ctx, func() { ss.removeKey(key) })
	})
}

// notify sends notifications/resources/updated for uri to its subscribers
// for whom want(agent) is true (nil: all). A subscriber whose channel is
// full misses this one; the next change notifies it again.
func (ss *subscriptions) notify(srv *server.MCPServer, uri string, log *slog.Logger, want func(agent string) bool) {
	ss.mu.Lock()
	subs := make([]*subscriber, 0, len(ss.byURI[uri]))
	for _, s := range ss.byURI[uri] {
		subs = append(subs, s)
	}
	ss.mu.Unlock()
	params := map[string]any{"uri": uri}
	for _, sub := range subs {
		if want != nil && sub.agent != "" && !want(sub.agent) {
			continue
		}
		if sub.stream != nil {
			n := mcp.JSONRPCNotification{
				JSONRPC:      mcp.JSONRPC_VERSION,
				Notification: mcp.Notification{Method: mcp.MethodNotificationResourceUpdated, Params: mcp.NotificationParams{AdditionalFields: params}},
			}
			select {
			case sub.stream.NotificationChannel() <- n:
			default:
				log.Debug("subscriber busy; notification dropped", "uri", uri)
			}
			continue
		}
		if err := srv.SendNotificationToSpecificClient(sub.sessionID, mcp.MethodNotificationResourceUpdated, params); err != nil {
			log.Debug("notify subscriber", "session", sub.sessionID, "err", err)
		}
	}
}
