package retention_test

import (
	"fmt"
	"os"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

func ExampleApprove() {
	dir, _ := os.MkdirTemp("", "nexus-example-")
	defer os.RemoveAll(dir)
	v, _, _ := vault.Init(dir)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	agents.Add(v, "lyra", "release engineer", now)

	// An agent proposes (the MCP 'retain' tool or 'nexus retain').
	it, err := retention.Retain(v, "lyra", agents.FactInput{
		Name: "PR descriptions in Korean", Description: "the user wants PR descriptions in Korean",
		Type: agents.FactFeedback, Body: "Write PR descriptions in Korean; titles may stay English.",
	}, retention.Provenance{Session: "s-1", Source: "log:2026-11-29T02:11Z"}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A person approves (the CLI, or status: approved in Obsidian).
	done, err := retention.Approve(v, it.ID, retention.Decision{By: "alice", Why: "confirmed", Now: now.Add(time.Hour)})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(done.Status, done.Result)
	// Output:
	// approved agents/lyra/memory/pr-descriptions-in-korean.md
}
