package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// TestWatchCarriesOutObsidianApproval: while 'nexus watch' runs, a person
// sets status: approved in a pending review file, and the fact lands
// without any further command.
func TestWatchCarriesOutObsidianApproval(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{"init", dir}, {"--vault", dir, "agent", "add", "lyra"}} {
		if code := run(context.Background(), args, strings.NewReader(""), new(bytes.Buffer), new(bytes.Buffer)); code != 0 {
			t.Fatalf("%v: exit %d", args, code)
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"--vault", dir, "--agent", "lyra", "--json", "retain", "--type", "feedback", "User wants PR descriptions in Korean"}, strings.NewReader(""), &out, new(bytes.Buffer)); code != 0 {
		t.Fatalf("retain: exit %d", code)
	}
	var item struct{ ID, Path, Target string }
	if err := json.Unmarshal(out.Bytes(), &item); err != nil || item.ID == "" {
		t.Fatalf("retain output %q: %v", out.String(), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"--vault", dir, "watch"}, strings.NewReader(""), new(bytes.Buffer), &errb)
	}()
	pending := filepath.Join(dir, filepath.FromSlash(item.Path))
	data, err := os.ReadFile(pending)
	if err != nil {
		t.Fatal(err)
	}
	approved, err := vault.SetProperty(data, "status", "approved")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pending, approved, 0o644); err != nil { // as Obsidian saves
		t.Fatal(err)
	}
	fact := filepath.Join(dir, filepath.FromSlash(item.Target))
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(fact); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("approval in the file was not carried out while watch ran; stderr:\n%s", errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("watch exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(pending); err == nil {
		t.Fatal("approved item still in review/pending/")
	}
	index, _ := os.ReadFile(filepath.Join(dir, "agents", "lyra", "memory", "INDEX.md"))
	if !strings.Contains(string(index), "User wants PR descriptions in Korean") {
		t.Fatalf("INDEX.md lacks the approved fact:\n%s", index)
	}
}
