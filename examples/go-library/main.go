// Command go-library shows Nexus used as a Go library, without the CLI or
// the MCP server: it makes a vault with two agents, gives one of them a
// bounded-memory entry and a fact, lets the other sign a live-log entry, and
// prints what the first agent sees at the start of its next session.
//
//	go run ./examples/go-library            # in a new temp folder
//	go run ./examples/go-library ~/scratch  # in ~/scratch (made a vault; run it again there as often as you like)
package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "go-library:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	dir := ""
	if len(args) > 0 {
		dir = args[0]
	} else {
		d, err := os.MkdirTemp("", "nexus-library-")
		if err != nil {
			return err
		}
		dir = d
	}
	// Init is safe on an existing folder: it only adds what is missing.
	v, _, err := vault.Init(dir)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for _, a := range []struct{ name, role string }{
		{"lyra", "operations: deploys, on-call, migrations"},
		{"ella", "research and planning"},
	} {
		// A second run in the same folder finds the agents there: keep
		// them (and their keys), as 'nexus agent add' would refuse to
		// replace them.
		if _, err := agents.Add(v, a.name, a.role, now); err != nil && !errors.Is(err, identity.ErrExists) {
			return err
		}
	}

	// Bounded memory, the Hermes way: entries joined by "§", limited in
	// code points, scanned for injection and secrets before they land.
	mem, err := agents.OpenMemory(v, "ella", agents.TargetMemory)
	if err != nil {
		return err
	}
	res, err := mem.Apply(agents.Op{Action: agents.ActionAdd, Content: "Staging deploys go through lyra; ask before touching prod."})
	if err != nil {
		return err
	}
	fmt.Printf("ella's MEMORY.md: %s, %d entries\n", res.Usage, res.EntryCount)

	// A durable fact, one file, listed in ella's memory/INDEX.md.
	f, err := agents.WriteFact(v, "ella", agents.FactInput{
		Name:        "Release calendar",
		Description: "Releases ship on Tuesdays; freeze starts Monday noon UTC",
		Type:        "project",
		Body:        "Agreed with the team in the January planning session.",
		Update:      true, // a second run rewrites it rather than fail on the name
	}, now)
	if err != nil {
		return err
	}
	fmt.Printf("fact written: agents/ella/memory/%s.md\n", f.Slug)

	// lyra signs an entry in the shared live log; ella reads what is new.
	log, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		return err
	}
	if _, err := log.Append("lyra", livelog.Entry{
		Channel: "deploy", Kind: "shipped",
		Summary: "Fixed the login timeout; PR #123 merged",
		Body:    "로그인 시간 초과 문제를 수정했습니다.",
	}); err != nil {
		return err
	}
	news, err := log.ReadUnread("ella", true)
	if err != nil {
		return err
	}
	for _, e := range news {
		fmt.Printf("ella reads: %s %s [%s/%s] %s\n", e.Time.Format(time.RFC3339), e.Agent, e.Channel, e.Kind, e.Summary)
	}

	// What ella's next session starts with (the session_start prompt).
	snap, err := agents.RenderSnapshot(v, "ella")
	if err != nil {
		return err
	}
	fmt.Printf("\n%s\nvault: %s\n", snap, v.Root())
	return nil
}
