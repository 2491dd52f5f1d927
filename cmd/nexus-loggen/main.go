// Command nexus-loggen fills a vault's live log with many signed entries,
// fast (one write and one fsync per batch instead of per entry), for
// benchmarks of reading and verifying big logs:
//
//	go run ./cmd/nexus-loggen -vault /tmp/big -n 1000000 -feeds 4
//
// The log is in the feeds layout, written as real appends write it
// (livelog's AppendBatch): one feed per writer, AGENT@DEVICE, in
// log/live/YYYY-MM/; each batch's first entry cites the heads of the
// other feeds it has seen. -feeds writers (agents lyra, ella, mallory,
// orion, then gen5, gen6, ...; or the names given to -agents) on this
// vault's device append -n entries between them, all at once, one
// goroutine each. The vault is created if needed. Entries are stamped one
// second apart from -start (a shared clock), so a million fit in one
// month.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
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

var defaultAgents = []string{"lyra", "ella", "mallory", "orion"}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("nexus-loggen", flag.ContinueOnError)
	dir := fs.String("vault", "", "vault folder (created if needed)")
	n := fs.Int("n", 1_000_000, "entries to append")
	batch := fs.Int("batch", 5000, "entries per batch (one write + fsync each)")
	bodySize := fs.Int("body", 80, "body bytes per entry")
	feeds := fs.Int("feeds", 4, "writers (feeds) appending at once")
	names := fs.String("agents", "", "comma-separated agent names (default: lyra, ella, mallory, orion, gen5, ... as many as -feeds)")
	device := fs.String("device", "", "device name to write as (default: the vault's; set for the vault if given)")
	start := fs.String("start", "2026-11-01T00:00:00Z", "time of the first entry")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *batch <= 0 || *n < 0 || *bodySize < 0 || *feeds <= 0 {
		return errors.New("-n, -batch, -body and -feeds must not be negative (-batch and -feeds above 0)")
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
	if *device != "" {
		if err := v.SetDevice(*device); err != nil {
			return err
		}
	}
	var agents []string
	if *names != "" {
		agents = strings.Split(*names, ",")
	} else {
		for i := range *feeds {
			if i < len(defaultAgents) {
				agents = append(agents, defaultAgents[i])
			} else {
				agents = append(agents, fmt.Sprintf("gen%d", i+1))
			}
		}
	}
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
	// One goroutine per writer: each feed has its own lock, so they
	// append at once, as agents do; signing is the cost, spread on all
	// cores.
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for w, agent := range agents {
		share := *n / len(agents)
		if w < *n%len(agents) {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < share; {
				k := min(*batch, share-done)
				es := make([]livelog.Entry, k)
				for i := range es {
					es[i] = livelog.Entry{Channel: "bench", Kind: "note", Summary: fmt.Sprintf("generated entry %d of %s", done+i, agent), Body: body}
				}
				if _, err := l.AppendBatch(agent, es); err != nil {
					errs[w] = err
					return
				}
				done += k
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dev, _ := v.Device()
	fmt.Fprintf(stdout, "appended %d entries in %d feeds (%s@%s) to %s in %s\n", *n, len(agents), strings.Join(agents, ","), dev, v.Root(), time.Since(began).Round(time.Millisecond))
	return nil
}
