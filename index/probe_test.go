package index

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

func TestProbeWalk(t *testing.T) {
	dir := os.Getenv("NEXUS_PROBE_VAULT")
	if dir == "" {
		t.Skip()
	}
	v, _ := vault.Open(dir)
	ix := &Index{v: v}
	for i := 0; i < 3; i++ {
		start := time.Now()
		files, err := ix.walk(context.Background())
		fmt.Println(len(files), err, time.Since(start))
	}
}
