package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

func TestFormatNotice(t *testing.T) {
	for _, tt := range []struct {
		total int
		by    map[string]int
		want  string
	}{
		{3, map[string]int{"ella": 3}, "3 new log entries from ella — call log_read"},
		{1, map[string]int{"ella": 1}, "1 new log entry from ella — call log_read"},
		{5, map[string]int{"mika": 2, "ella": 3}, "5 new log entries from ella (3), mika (2) — call log_read"},
		{4, map[string]int{"mika": 2, "ella": 2}, "4 new log entries from ella (2), mika (2) — call log_read"},
		{1, map[string]int{"": 1}, "1 new log entry from a person (typed by hand) — call log_read"},
	} {
		if got := formatNotice(tt.total, tt.by); got != tt.want {
			t.Errorf("formatNotice(%d, %v) = %q, want %q", tt.total, tt.by, got, tt.want)
		}
	}
}

func TestSessionBinder(t *testing.T) {
	var ended []string
	b := newSessionBinder(func(id string) { ended = append(ended, id) })
	req := func(agent string) *http.Request {
		r := httptest.NewRequest("POST", "/mcp", nil)
		return r.WithContext(withAgent(r.Context(), agent))
	}
	lyra, ella, house := b.ResolveSessionIdManager(req("lyra")), b.ResolveSessionIdManager(req("ella")), b.ResolveSessionIdManager(nil)
	id := lyra.Generate()
	if id2 := lyra.Generate(); id2 == id {
		t.Fatal("session ids repeat")
	}
	if _, err := lyra.Validate(id); err != nil {
		t.Errorf("owner: %v", err)
	}
	if _, err := ella.Validate(id); err == nil {
		t.Error("another agent validated lyra's session")
	}
	if _, err := house.Validate(id); err != nil {
		t.Errorf("housekeeping: %v", err)
	}
	for _, bad := range []string{"", "nexus-", "mcp-session-x", id + "x"} {
		if _, err := lyra.Validate(bad); err == nil {
			t.Errorf("Validate(%q) ok", bad)
		}
	}
	if notAllowed, _ := ella.Terminate(id); !notAllowed {
		t.Error("ella ended lyra's session")
	}
	if _, err := lyra.Validate(id); err != nil {
		t.Errorf("session gone after a refused terminate: %v", err)
	}
	if notAllowed, err := lyra.Terminate(id); notAllowed || err != nil {
		t.Errorf("owner terminate: %v %v", notAllowed, err)
	}
	if _, err := lyra.Validate(id); err == nil {
		t.Error("terminated session still valid")
	}
	if len(ended) != 1 || ended[0] != id {
		t.Errorf("ended callbacks: %v", ended)
	}
	if n := b.sessionCount(); n != 1 {
		t.Errorf("%d sessions left, want 1", n)
	}
	unauth := b.ResolveSessionIdManager(httptest.NewRequest("POST", "/mcp", nil))
	if _, err := unauth.Validate(lyra.Generate()); err == nil {
		t.Error("a request without an agent validated a session")
	}
}

func TestSubscriptionsBookkeeping(t *testing.T) {
	ss := newSubscriptions()
	ss.add(LiveLogURI, "id:a", &subscriber{sessionID: "a"})
	ss.add(LiveLogURI, "id:b", &subscriber{sessionID: "b"})
	ss.add(NoteURI("projects/x.md"), "id:a", &subscriber{sessionID: "a"})
	if n := ss.count(); n != 3 {
		t.Fatalf("count %d", n)
	}
	ss.remove(LiveLogURI, "id:b")
	ss.removeKey("id:a")
	if n := ss.count(); n != 0 {
		t.Errorf("count %d after removing all", n)
	}
}

func TestNoteURI(t *testing.T) {
	for in, want := range map[string]string{
		"projects/atlas plan.md": "nexus://vault/projects/atlas%20plan.md",
		"메모/회의.md":               "nexus://vault/%EB%A9%94%EB%AA%A8/%ED%9A%8C%EC%9D%98.md",
		"a/b#c?.md":              "nexus://vault/a/b%23c%3F.md",
	} {
		if got := NoteURI(in); got != want {
			t.Errorf("NoteURI(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorResultShowsOnlyUsefulResults(t *testing.T) {
	type fact struct {
		Name string `json:"name"`
	}
	var nilPtr *fact
	for _, tt := range []struct {
		v    any
		want string
	}{
		{nil, `{"success":false,"error":"boom"}`},
		{nilPtr, `{"success":false,"error":"boom"}`},
		{fact{}, `{"success":false,"error":"boom"}`},
		{fact{Name: "x"}, `{"error":"boom","name":"x"}`},
		{map[string]any{"error": "own message", "usage": "1%"}, `{"error":"own message","usage":"1%"}`},
	} {
		res := errorResult(tt.v, errors.New("boom"))
		if !res.IsError || len(res.Content) != 1 {
			t.Fatalf("%#v: %+v", tt.v, res)
		}
		if got := res.Content[0].(mcp.TextContent).Text; got != tt.want {
			t.Errorf("errorResult(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
}

// fakeSession is a listen stream that records its notifications.
type fakeSession struct {
	id string
	ch chan mcp.JSONRPCNotification
}

func (f *fakeSession) Initialize()                                         {}
func (f *fakeSession) Initialized() bool                                   { return true }
func (f *fakeSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return f.ch }
func (f *fakeSession) SessionID() string                                   { return f.id }

// TestLiveLogNotifiesOnlyWhoHasNews: an agent is not told about its own
// appends, only about other agents'.
func TestLiveLogNotifiesOnlyWhoHasNews(t *testing.T) {
	v, _, err := vault.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"lyra", "ella"} {
		if _, err := agents.Add(v, n, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Vault: v, LogPollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	lyra := &fakeSession{"l", make(chan mcp.JSONRPCNotification, 8)}
	ella := &fakeSession{"e", make(chan mcp.JSONRPCNotification, 8)}
	s.subs.add(LiveLogURI, "stream:l", &subscriber{stream: lyra, agent: "lyra"})
	s.subs.add(LiveLogURI, "stream:e", &subscriber{stream: ella, agent: "ella"})

	if _, err := s.lg.Append("lyra", livelog.Entry{Summary: "lyra did a thing"}); err != nil {
		t.Fatal(err)
	}
	s.liveLogChanged()
	if len(lyra.ch) != 0 || len(ella.ch) != 1 {
		t.Fatalf("after lyra's append: lyra got %d, ella got %d; want 0 and 1", len(lyra.ch), len(ella.ch))
	}
	n := <-ella.ch
	if n.Method != mcp.MethodNotificationResourceUpdated || n.Params.AdditionalFields["uri"] != LiveLogURI {
		t.Errorf("notification: %+v", n)
	}
	if _, err := s.lg.Append("ella", livelog.Entry{Summary: "ella answered"}); err != nil {
		t.Fatal(err)
	}
	s.liveLogChanged()
	if len(lyra.ch) != 1 {
		t.Errorf("after ella's append lyra got %d notifications, want 1", len(lyra.ch))
	}
}

func TestLiveLogResourceTail(t *testing.T) {
	v, _, err := vault.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := identity.Create(v, "lyra", "", time.Now()); err != nil {
		t.Fatal(err)
	}
	lg, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{v: v, lg: lg}
	res, err := s.readLiveLogResource(context.Background(), mcp.ReadResourceRequest{})
	if err != nil || len(res) != 1 || !strings.Contains(res[0].(mcp.TextResourceContents).Text, "The newest 0 entries") {
		t.Fatalf("empty log: %v %+v", err, res)
	}
	var es []livelog.Entry
	for i := range 300 {
		es = append(es, livelog.Entry{Summary: fmt.Sprintf("entry %06d", i), Body: strings.Repeat("body line\n", 150)})
	}
	if _, err := lg.AppendBatch("lyra", es); err != nil {
		t.Fatal(err)
	}
	res, err = s.readLiveLogResource(context.Background(), mcp.ReadResourceRequest{})
	if err != nil {
		t.Fatal(err)
	}
	text := res[0].(mcp.TextResourceContents).Text
	if len(text) > maxLiveLogResource+200 || !strings.HasPrefix(text, "(the last ") {
		t.Fatalf("tail: %d bytes, starts %q", len(text), text[:80])
	}
	if !strings.Contains(text, "entry 000299") || strings.Contains(text, "entry 000000") {
		t.Error("the resource is not the newest entries")
	}
	if first := strings.SplitN(text, "\n\n", 2)[1]; !strings.HasPrefix(first, "- ") && !strings.HasPrefix(first, "    body line") && !strings.HasPrefix(first, "## ") {
		t.Errorf("tail does not start at a line: %q", first[:40])
	}
}

// TestSlowUnreadCountNeverHoldsACall: an agent's first unread count (the
// whole log, for an agent without a cursor) may take seconds; the call
// it would annotate answers without the notice, and the count finishes
// in the background for the next calls.
func TestSlowUnreadCountNeverHoldsACall(t *testing.T) {
	v, _, err := vault.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"lyra", "ella"} {
		if _, err := agents.Add(v, n, "", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(Options{Vault: v, LogPollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	s.smallLog = 0 // as on a big log: the call does not wait for the count
	s.count = func(agent string) (int, map[string]int, error) {
		<-release
		return s.lg.UnreadCount(agent)
	}
	if _, err := s.lg.Append("ella", livelog.Entry{Summary: "ella did a thing"}); err != nil {
		t.Fatal(err)
	}
	if _, notice := s.unreadNotice("lyra"); notice != "" {
		t.Errorf("notice while the count is held: %q", notice)
	}
	s.unread.mu.Lock()
	done := s.unread.counting["lyra"]
	s.unread.mu.Unlock()
	if done == nil {
		t.Fatal("no count under way for lyra")
	}
	close(release)
	<-done
	s.unread.mu.Lock()
	got := s.unread.byAgent["lyra"]
	s.unread.mu.Unlock()
	if got.total != 1 || got.by["ella"] != 1 {
		t.Errorf("count after the background count: %+v, want 1 from ella", got)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
