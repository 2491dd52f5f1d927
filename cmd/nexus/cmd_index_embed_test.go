//go:build !lite

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/vault"
)

func TestIndexEmbedStatusAndHybridSearch(t *testing.T) {
	dir := searchVault(t)
	if code, _, stderr := searchCLI(t, nil, "--vault", dir, "index", "embed"); code != 2 || !strings.Contains(stderr, "search.embeddings") {
		t.Fatalf("embed without a model: exit %d, %s", code, stderr)
	}
	cf := filepath.Join(dir, ".nexus", "config.yaml")
	f, err := os.OpenFile(cf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\nsearch:\n  embeddings:\n    provider: openai\n    url: %s\n    model: ways\n    query_timeout: 30s\n", fakeEmbeddings(t))
	f.Close()

	code, out, stderr := searchCLI(t, nil, "--vault", dir, "index", "embed")
	if code != 0 || !strings.Contains(out, "Embedded 4 sections with openai ways@") || !strings.Contains(out, "0 cached, 4 embedded") || !strings.Contains(stderr, "embedding: 4/4 texts") {
		t.Fatalf("embed: exit %d\n%s\n%s", code, out, stderr)
	}
	if code, out, _ := searchCLI(t, nil, "--vault", dir, "index", "embed"); code != 0 || !strings.Contains(out, "4 cached, 0 embedded") {
		t.Fatalf("embed again: exit %d\n%s", code, out)
	}
	if code, out, _ := searchCLI(t, nil, "--vault", dir, "index", "status"); code != 0 || !strings.Contains(out, "meaning:     4 of 4 sections embedded, model openai ways@") || !strings.Contains(out, "4 cached, 0 embedded") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}

	type result struct {
		Hits []struct {
			Path  string
			Match string
			Via   []string
		}
		Notice string
	}
	search := func(args ...string) result {
		t.Helper()
		code, out, stderr := searchCLI(t, nil, append([]string{"--vault", dir, "--json", "search"}, args...)...)
		if code != 0 {
			t.Fatalf("search %v: exit %d, %s", args, code, stderr)
		}
		var r result
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("search %v: %v\n%s", args, err, out)
		}
		return r
	}
	// "front door" shares no word with the note on the ssh port.
	r := search("front door")
	if len(r.Hits) == 0 || r.Hits[0].Path != "projects/staging.md" || r.Hits[0].Match != "meaning" || fmt.Sprint(r.Hits[0].Via) != "[meaning]" || r.Notice != "" {
		t.Fatalf("by meaning: %+v", r)
	}
	// also: a phrasing in other words joins the ranking.
	r = search("fridays", "--also", "staging port")
	if len(r.Hits) < 2 || r.Hits[0].Path != "agents/lyra/memory/f.md" || !strings.Contains(fmt.Sprint(r.Hits), "projects/staging.md") {
		t.Fatalf("also: %+v", r)
	}
}

// TestWatchKeepsEmbeddingsCurrent: with a model configured, 'nexus
// watch' embeds the notes and, after a note is added, that note too, so
// a search by meaning finds it without 'nexus index embed'.
func TestWatchKeepsEmbeddingsCurrent(t *testing.T) {
	dir := searchVault(t)
	cf := filepath.Join(dir, ".nexus", "config.yaml")
	f, err := os.OpenFile(cf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "\nsearch:\n  embeddings:\n    provider: openai\n    url: %s\n    model: ways\n    query_timeout: 30s\n", fakeEmbeddings(t))
	f.Close()
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	embedded := func() int {
		st, err := hybrid.ReadStatus(v)
		if err != nil {
			t.Fatal(err)
		}
		return st.Embedded
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var errb bytes.Buffer
	go func() {
		done <- run(ctx, []string{"--vault", dir, "watch"}, strings.NewReader(""), new(bytes.Buffer), &errb)
	}()
	stop := func(why string) {
		t.Helper()
		cancel()
		<-done
		t.Fatalf("%s; watch's stderr:\n%s", why, errb.String())
	}
	// Each embedding run rewrites hybrid.SectionsFile in the index
	// folder: wait on those writes, not on a clock.
	idx := filepath.Join(dir, filepath.FromSlash(vault.IndexDir))
	if err := os.MkdirAll(idx, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Add(idx); err != nil {
		t.Fatal(err)
	}
	await := func(want int) {
		t.Helper()
		timeout := time.After(60 * time.Second)
		for embedded() < want {
			select {
			case <-w.Events:
			case err := <-w.Errors:
				stop(fmt.Sprintf("watching the index folder: %v", err))
			case <-timeout:
				stop(fmt.Sprintf("%d sections embedded, want %d", embedded(), want))
			}
		}
	}
	await(4)
	note := filepath.Join(dir, "notes", "gate.md")
	if err := os.WriteFile(note, []byte("# Gate\n\nThe back door code is 4711.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	await(5)
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("watch exit %d: %s", code, errb.String())
	}
	code, out, stderr := searchCLI(t, nil, "--vault", dir, "--json", "search", "entrance door")
	if code != 0 || !strings.Contains(out, "notes/gate.md") {
		t.Fatalf("search by meaning after watch: exit %d\n%s\n%s", code, out, stderr)
	}
}
