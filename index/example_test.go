package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

func Example() {
	dir, _ := os.MkdirTemp("", "nexus-example-")
	defer os.RemoveAll(dir)
	v, _, _ := vault.Init(dir)
	os.MkdirAll(filepath.Join(dir, "projects"), 0o755) // init makes only .nexus/
	os.WriteFile(filepath.Join(dir, "projects", "staging.md"), []byte("# Staging\n\nThe staging ssh port is 2222.\n"), 0o644)

	ix, err := index.Open(v, index.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	ctx := context.Background()
	if err := ix.Sync(ctx); err != nil { // or ix.Start(ctx) to keep it current
		fmt.Println(err)
		return
	}
	res, _ := ix.Search(ctx, index.Query{Text: "ssh port"})
	for _, h := range res.Hits {
		fmt.Printf("%s:%d %s\n%s\n", h.Path, h.Line, h.Title, h.Snippet)
	}
	// Output:
	// projects/staging.md:1 Staging
	// Staging The staging **ssh** **port** is 2222.
}
