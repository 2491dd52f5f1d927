//go:build unix

package index

import (
	"context"
	"strings"
	"syscall"
	"testing"

	"github.com/nexus-memory/nexus/index/holder"
)

// TestStoppedHolder: a holder stopped (SIGSTOP) after it answered the
// ping does not make a search wait forever: the search gives up once the
// holder has been silent for ten keep-alive intervals, tries to take the
// index over (the stopped process still holds its lock) or reach a new
// holder (the stopped one does not answer the ping), and fails with a
// connection error naming the holder. Once the holder runs again, the
// next search is answered by it.
func TestStoppedHolder(t *testing.T) {
	v := mustVault(t, map[string]string{"a.md": "feijoa"})
	h := startHolder(t, v, "NEXUS_INDEX_HELPER_KEEPALIVE=50ms")
	defer func() {
		h.cmd.Process.Signal(syscall.SIGCONT)
		if err := h.stop(); err != nil {
			t.Error(err)
		}
	}()
	ix := mustOpen(t, v, Options{})
	if !ix.Remote() {
		t.Fatal("index not held by the helper")
	}
	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	_, err := ix.Search(context.Background(), Query{Text: "feijoa"})
	if !holder.IsConnError(err) || !strings.Contains(err.Error(), "sent nothing") {
		t.Fatalf("search of a stopped holder: %v, want a connection error saying it sent nothing", err)
	}
	if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if res := mustSearch(t, ix, Query{Text: "feijoa"}); len(res.Hits) != 1 || !ix.Remote() {
		t.Fatalf("after the holder resumed: %v remote=%v", paths(res), ix.Remote())
	}
}
