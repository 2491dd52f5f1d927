package index

import (
	"context"
	"fmt"
)

// Snippets gives each note, log or decision hit of hits that has no
// snippet the one a search by q shows for it: at the hit's line (a long
// note at the section its search chose), a quarantined log entry masked
// as a search masks it. Hits of a search with Query.Snippets have none
// past that rank; a caller that shows some of those (a fused search)
// fills them in here instead of searching again.
//
// It reports false, having done nothing, when this process does not hold
// the index (it asks a holder): then search each note by its path.
func (ix *Index) Snippets(ctx context.Context, q Query, hits []Hit) (bool, error) {
	if ix.isClosed() {
		return false, ErrClosed
	}
	pl, err := buildQuery(validQuery(q), true)
	if err != nil {
		return false, err
	}
	ix.bmu.RLock()
	defer ix.bmu.RUnlock()
	if ix.remote != nil || ix.bi == nil {
		return false, nil
	}
	an := ix.bi.Mapping().AnalyzerNamed(analyzerName)
	terms := queryTerms(an, pl.p)
	err = unpanic(func() error {
		for i := range hits {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			h := &hits[i]
			if h.Snippet != "" {
				continue
			}
			var data []byte
			switch h.Kind {
			case KindLog, KindDecision:
				var masked bool
				if data, masked = ix.maskQuarantined(h, ix.readHit(h.Path)); masked {
					continue
				}
			case KindNote, "":
			default:
				continue
			}
			h.Snippet = ix.snippet(an, terms, *h, data)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("snippets: %w", err)
	}
	return true, nil
}
