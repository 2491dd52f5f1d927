package agents

import (
	"os"
	"slices"
	"testing"
	"time"
)

// TestInPlaceSaveDuringWrite: a person's editor saves MEMORY.md in place
// (truncate, pause, write) while the agent adds an entry. The agent must
// not act on the empty file it may see in between: both the person's text
// and the agent's entry survive.
func TestInPlaceSaveDuringWrite(t *testing.T) {
	v := memTestVault(t, 0, 0)
	m, err := OpenMemory(v, "lyra", TargetMemory)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"old one", "old two"} {
		if _, err := m.Apply(Op{Action: ActionAdd, Content: e}); err != nil {
			t.Fatal(err)
		}
	}
	saved := "old one\n§\nold two\n§\nperson edit"
	truncated := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(m.path, os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			done <- err
			return
		}
		close(truncated)
		time.Sleep(150 * time.Millisecond) // an editor between truncate and write
		_, err = f.WriteString(saved)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	<-truncated
	res, err := m.Apply(Op{Action: ActionAdd, Content: "agent entry"})
	if err != nil || !res.Success {
		t.Fatalf("add: %+v %v", res, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := mustEntries(t, m)
	want := []string{"old one", "old two", "person edit", "agent entry"}
	if !slices.Equal(got, want) {
		t.Fatalf("entries %q, want %q: a side of the concurrent save was lost", got, want)
	}
}
