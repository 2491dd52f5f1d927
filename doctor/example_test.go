package doctor_test

import (
	"context"
	"fmt"
	"os"

	"github.com/nexus-memory/nexus/doctor"
	"github.com/nexus-memory/nexus/vault"
)

// Check a vault and print every finding with its fix.
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "doctor-example-")
	defer os.RemoveAll(dir)
	if _, _, err := vault.Init(dir); err != nil {
		fmt.Println(err)
		return
	}
	rep, err := doctor.Run(context.Background(), dir, doctor.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rep.Results {
		fmt.Println(r.Check, r.OK)
	}
	for _, f := range rep.Findings() {
		fmt.Printf("%s: %s\n  fix: %s\n", f.Path, f.Problem, f.Fix)
	}
	// Output:
	// config true
	// conflicts true
	// key-mode true
	// key-pair true
	// machine true
	// locks true
	// log true
	// forks true
	// cites true
	// synced-keys true
	// device-name true
	// index true
	// temp-files true
	// review true
	// odd-files true
	// ignore-rules true
}
