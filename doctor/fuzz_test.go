package doctor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// FuzzDoctor writes arbitrary bytes where people edit by hand — the config,
// a pending review item, a live-log segment — and checks that doctor never
// fails or panics on them: whatever is there is a finding, never an error,
// and a report that says OK has no findings.
func FuzzDoctor(f *testing.F) {
	f.Add([]byte("memory_char_limit: 3000\n"), []byte("---\nkind: fact\nagent: ella\nstatus: pending\n---\nbody\n"), []byte("### 2026-01-13T02:00:00Z lyra [deploy/handoff] hi\n<!-- nexus prev=x sig=y -->\n"))
	f.Add([]byte("memory_char_limit: [\n"), []byte("---\n---\n"), []byte("Note from Sam: hello\n"))
	f.Add([]byte("agents:\n  ghost:\n    token_sha256: 00\n"), []byte("\x00\xff"), []byte("### not a time lyra [a/b] x\n"))
	f.Add([]byte{}, []byte("status: approved"), []byte("<!-- nexus prev= sig= -->"))
	dir := f.TempDir()
	base := filepath.Join(dir, "base")
	v, _, err := vault.Init(base)
	if err != nil {
		f.Fatal(err)
	}
	for _, n := range []string{"lyra", "ella"} {
		if _, err := agentsAdd(v, n); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, config, review, segment []byte) {
		tmp, err := os.MkdirTemp(dir, "v-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		root := filepath.Join(tmp, "vault")
		if err := os.CopyFS(root, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		write := func(rel string, data []byte) {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(vault.ConfigFile, config)
		write("review/pending/r-fuzz.md", review)
		write(livelog.SegmentName(t0), segment)
		// os.CopyFS drops modes; keys must stay private for a clean report.
		keys, _ := filepath.Glob(filepath.Join(root, ".nexus", "keys", "*.key"))
		for _, k := range keys {
			os.Chmod(k, 0o600)
		}
		rep, err := Run(context.Background(), root, Options{LockWait: time.Millisecond})
		if err != nil {
			t.Fatalf("doctor failed instead of reporting: %v", err)
		}
		if rep.OK != (len(rep.Findings()) == 0) {
			t.Fatalf("OK %v with %d findings", rep.OK, len(rep.Findings()))
		}
		for _, fd := range rep.Findings() {
			if fd.Problem == "" || fd.Fix == "" || fd.Check == "" {
				t.Fatalf("incomplete finding %+v", fd)
			}
		}
	})
}

func agentsAdd(v *vault.Vault, name string) (*identity.Identity, error) {
	return agents.Add(v, name, "", t0)
}
