// Command nexus-loggen fills a vault's live log with many signed entries,
// fast (one write and one fsync per batch instead of per entry), for
// benchmarks of reading and verifying big logs:
//
//	go run ./cmd/nexus-loggen -vault /tmp/big -n 1000000
//
// The vault is created if needed, with agents lyra, ella and mallory.
// Entries are stamped one second apart from -start, so a million fit in
// one monthly segment. Agents take turns, one batch each.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nexus-loggen:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nexus-loggen", flag.ContinueOnError)
	dir := fs.String("vault", "", "vault folder (created if needed)")
	n := fs.Int("n", 1_000_000, "entries to append")
	batch := fs.Int("batch", 5000, "entries per batch (one write + fsync each)")
	bodySize := fs.Int("body", 80, "body bytes per entry")
	names := fs.String("agents", "lyra,ella,mallory", "agents that take turns")
	start := fs.String("start", "2026-11-01T00:00:00Z", "time of the first entry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *batch <= 0 || *n < 0 || *bodySize < 0 {
		return errors.New("-n, -batch and -body must not be negative (-batch above 0)")
	}
	if *dir == "" {
		return errors.New("-vault is required")
	}
	t0, err := time.Parse(time.RFC3339, *start)
	if err != nil {
		return fmt.Errorf("-start: %w", err)
	}
	v, _, err := vault.Init(*dir)
	if err != nil {
		return err
	}
	agents := strings.Split(*names, ",")
	for _, a := range agents {
		if _, err := identity.Create(v, a, "generated", t0); err != nil && !errors.Is(err, identity.ErrExists) {
			return err
		}
	}
	var mu sync.Mutex
	next := t0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := next
		next = next.Add(time.Second)
		return t
	}
	l, err := livelog.Open(v, livelog.Options{Now: clock})
	if err != nil {
		return err
	}
	body := strings.Repeat("generated body text ", *bodySize/20+1)[:*bodySize]
	began := time.Now()
	for done, turn := 0, 0; done < *n; turn++ {
		k := min(*batch, *n-done)
		es := make([]livelog.Entry, k)
		for i := range es {
			es[i] = livelog.Entry{Channel: "bench", Kind: "note", Summary: fmt.Sprintf("generated entry %d", done+i), Body: body}
		}
		if _, err := l.AppendBatch(agents[turn%len(agents)], es); err != nil {
			return err
		}
		done += k
	}
	fmt.Fprintf(stdout, "appended %d entries to %s in %s\n", *n, v.Root(), time.Since(began).Round(time.Millisecond))
	return nil
}
