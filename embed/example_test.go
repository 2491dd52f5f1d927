package embed_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/vault"
)

// Example shows the whole layer: the provider the vault's config names,
// an incremental Sync of the vault's sections, a query, and the one-line
// notice a search shows when meaning is unavailable.
func Example() {
	dir, _ := filepath.Abs("testdata/no-such-vault")
	cfg := vault.EmbeddingsConfig{Provider: "static", Path: "models/potion"}
	p, err := embed.New(cfg, dir)
	if err != nil {
		// No model: search runs on words and says why, once.
		notice, _, _ := strings.Cut(embed.Notice(err), " folder: ")
		fmt.Println(notice, errors.Is(err, embed.ErrNotModel))
		return
	}
	store, _ := embed.OpenStoreAt(filepath.Join(dir, ".nexus", "index", embed.StoreFile))
	cost, _ := store.Sync(context.Background(), p, []embed.Section{{Path: "a.md", Line: 1, Text: "version history"}}, embed.SyncOptions{})
	fmt.Println(cost.Embedded, cost.Cached)
	hits, _ := store.Query(context.Background(), p, "how do I undo a change", 5)
	fmt.Println(len(hits))
	// Output: words only, meaning search unavailable: static: not a model2vec model true
}
