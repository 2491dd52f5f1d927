package agents_test

import (
	"fmt"
	"os"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

func ExampleWriteFact() {
	dir, _ := os.MkdirTemp("", "nexus-example-")
	defer os.RemoveAll(dir)
	v, _, _ := vault.Init(dir)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	agents.Add(v, "lyra", "release engineer", now)

	f, err := agents.WriteFact(v, "lyra", agents.FactInput{
		Name:        "배포 규칙",
		Description: "no deploys on Fridays",
		Type:        agents.FactFeedback,
		Body:        "금요일에는 배포하지 않는다.",
	}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Path)
	index, _ := os.ReadFile(v.MustPath(agents.HomePath("lyra", agents.IndexFile)))
	fmt.Print(string(index))
	// Output:
	// agents/lyra/memory/배포-규칙.md
	// - [[배포-규칙|배포 규칙]] — no deploys on Fridays
}
