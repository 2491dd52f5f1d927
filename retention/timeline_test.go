package retention

import (
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

func TestKeeperKeepsTheTimeline(t *testing.T) {
	v := mustVault(t)
	k := &Keeper{v: v, opts: KeeperOptions{Now: func() time.Time { return t0 }, Logger: slog.New(slog.DiscardHandler)}}
	k.RunOnce()
	if _, err := os.Stat(v.MustPath("log")); !os.IsNotExist(err) {
		t.Fatalf("a keeper made log/ in a vault with no entries: %v", err)
	}
	l, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("lyra", livelog.Entry{Channel: "deploy", Kind: "shipped", Summary: "Gateway 2.4 is live"}); err != nil {
		t.Fatal(err)
	}
	k.RunOnce()
	text, err := os.ReadFile(v.MustPath(vault.TimelineFile))
	if err != nil || !strings.Contains(string(text), "Gateway 2.4 is live") {
		t.Fatalf("timeline after an append: %v\n%s", err, text)
	}
}
