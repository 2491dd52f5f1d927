package hybrid

import (
	"context"
	"time"

	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// KeepQuiet is how long the vault must be quiet before changed notes are
// embedded again by [Keep].
const KeepQuiet = 2 * time.Second

// Keep embeds the sections of v's notes now and again after ix changes
// (once the vault has been quiet for KeepQuiet), until ctx is done: only
// changed text is embedded (the store caches by content hash). A failing
// model is reported to warn and tried again at the next change; searches
// meanwhile answer by words. It returns at once when no model is
// configured. The processes that keep the index current run it: `nexus
// serve` and `nexus watch`.
func Keep(ctx context.Context, v *vault.Vault, ix *index.Index, warn func(error)) {
	if !v.Config().Search.Embeddings.Enabled() {
		return
	}
	e := NewEmbedder(v, nil)
	ver := ix.Version()
	for {
		if _, err := e.Run(ctx, nil); err != nil && ctx.Err() == nil && warn != nil {
			warn(err)
		}
		next, err := ix.Wait(ctx, ver)
		if err != nil {
			return
		}
		for quiet := false; !quiet; { // wait for a pause in the changes
			wctx, cancel := context.WithTimeout(ctx, KeepQuiet)
			n, err := ix.Wait(wctx, next)
			cancel()
			if ctx.Err() != nil {
				return
			}
			quiet = err != nil
			next = max(next, n)
		}
		ver = next
	}
}
