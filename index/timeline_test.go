package index

import (
	"context"
	"testing"

	"github.com/nexus-memory/nexus/vault"
)

// The derived timeline repeats log entries the index already holds from
// the feeds: it is not indexed, so a search never shows an entry twice.
func TestTimelineIsNotIndexed(t *testing.T) {
	v := mustVault(t, map[string]string{
		vault.TimelineFile: "# Live log timeline\n\n- 10:00:00 **lyra@vps** `ops/incident` quokka outage\n",
		"projects/zoo.md":  "# Zoo\n\nThe quokka enclosure.\n",
	})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := paths(mustSearch(t, ix, Query{Text: "quokka"}))
	if len(got) != 1 || got[0] != "projects/zoo.md" {
		t.Fatalf("hits %v, want only projects/zoo.md", got)
	}
}
