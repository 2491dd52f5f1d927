package index

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

func TestSmoke(t *testing.T) {
	dir := t.TempDir()
	v, _, err := vault.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "projects", "staging.md"), []byte("---\ntags: [infra]\naliases: [stage box]\n---\n# Staging\n\nThe staging ssh port is 2222.\n\n배포를 시작했다.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "projects", "other.md"), []byte("# Other\n\nnothing about ports here. ssh keys rotate.\n"), 0o644)
	ix, err := Open(v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if err := ix.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"staging ssh port", "배포", "stage box", "tag:infra port", `"ssh port"`, "title:staging", "ssh -keys"} {
		res, err := ix.Search(ctx, Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d", q, res.Total)
		for _, h := range res.Hits {
			t.Logf("  %s:%d %s %.3f %s", h.Path, h.Line, h.Title, h.Score, h.Snippet)
		}
	}
	st, err := ix.Status(ctx)
	t.Logf("%+v %v", st, err)
	ix2, err := Open(v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := ix2.Search(ctx, Query{Text: "배포"})
	t.Logf("remote=%v %+v %v", ix2.Remote(), res, err)
	ix2.Close()
}
