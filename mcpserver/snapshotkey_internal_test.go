package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestSnapshotKeysAreBoundToTheAgent(t *testing.T) {
	k := newSnapshotKeys()
	id := k.mint("lyra")
	if !k.valid(id, "lyra") {
		t.Fatalf("%s not valid for lyra", id)
	}
	for _, bad := range []string{id + "0", id[:len(id)-1] + "x", "nexus-snap-00-00", "nexus-1234"} {
		if k.valid(bad, "lyra") {
			t.Errorf("%q valid", bad)
		}
	}
	if k.valid(id, "ella") {
		t.Error("lyra's key valid for ella")
	}
	if newSnapshotKeys().valid(id, "lyra") {
		t.Error("a key valid on another server")
	}

	s := &Server{snapKeys: k}
	req := func(version, id string) (*http.Request, *httptest.ResponseRecorder) {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Mcp-Protocol-Version", version)
		if id != "" {
			r.Header.Set("Mcp-Session-Id", id)
		}
		w := httptest.NewRecorder()
		return s.bindSnapshotKey(w, r, "ella"), w
	}
	// Ella presenting lyra's key gets no snapshot and no id back.
	r, w := req("2026-07-28", id)
	if snapshotKeyFrom(r.Context()) != "" || w.Header().Get("Mcp-Session-Id") != "" || r.Header.Get("Mcp-Session-Id") != "" {
		t.Errorf("foreign key: ctx %q, response %q", snapshotKeyFrom(r.Context()), w.Header().Get("Mcp-Session-Id"))
	}
	// A first stateless request is given a key; older protocols are untouched.
	r, w = req("2026-07-28", "")
	if got := w.Header().Get("Mcp-Session-Id"); got == "" || got != snapshotKeyFrom(r.Context()) || !k.valid(got, "ella") {
		t.Errorf("minted %q, ctx %q", got, snapshotKeyFrom(r.Context()))
	}
	r, w = req("2025-11-25", "nexus-abc")
	if snapshotKeyFrom(r.Context()) != "" || w.Header().Get("Mcp-Session-Id") != "" || r.Header.Get("Mcp-Session-Id") != "nexus-abc" {
		t.Error("an older protocol's session was touched")
	}
}
