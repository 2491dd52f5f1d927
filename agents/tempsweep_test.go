package agents

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/internal/atomicfile"
)

// TestFactWriteSweepsLeftoverTemps: temp files a killed writer left in the
// facts folder are removed by the next fact write; young ones (a live
// writer's) stay. (The fact cache's folder is swept when the cache is
// rewritten whole; appends to its journal make no temp file.)
func TestFactWriteSweepsLeftoverTemps(t *testing.T) {
	v := mustFactVault(t)
	mustWriteFact(t, v, FactInput{Name: "First", Description: "d", Type: "project", Body: "b"}) // makes the folders
	now := time.Now()
	var old, fresh []string
	for _, dir := range []string{v.MustPath(HomePath("lyra", FactsDir))} {
		for _, f := range []struct {
			name string
			age  time.Duration
			list *[]string
		}{
			{".x.md.tmp-12345", atomicfile.StaleAge + time.Minute, &old},
			{".y.md.tmp-67890", time.Second, &fresh},
		} {
			p := filepath.Join(dir, f.name)
			if err := os.WriteFile(p, []byte("half a write"), 0o644); err != nil {
				t.Fatal(err)
			}
			mt := now.Add(-f.age)
			os.Chtimes(p, mt, mt)
			*f.list = append(*f.list, p)
		}
	}
	// This process swept these folders at the first write; a new process
	// (the next CLI command) has not. Forget the sweeps to stand for it.
	atomicfile.ForgetSweeps()
	mustWriteFact(t, v, FactInput{Name: "Second", Description: "d", Type: "project", Body: "b"})
	for _, p := range old {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("leftover %s kept: %v", p, err)
		}
	}
	for _, p := range fresh {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("young temp file %s removed: %v", p, err)
		}
	}
}
