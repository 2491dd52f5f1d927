//go:build unix

package mcpserver_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
)

// TestHubOnABigLogWritesAtOnceAndStops: a hub started on a vault whose
// big log has no search index yet (.nexus/index never travels with the
// vault) acknowledges an append, from an agent without a cursor, while
// it indexes the log in the background; SIGTERM then ends it with status
// 0, indexing or not (issue 33).
func TestHubOnABigLogWritesAtOnceAndStops(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	lg, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	for done := 0; done < n; done += 5000 {
		es := make([]livelog.Entry, 5000)
		for i := range es {
			es[i] = livelog.Entry{Channel: "bench", Kind: "note", Summary: fmt.Sprintf("generated entry %d", done+i), Body: "generated body text generated body text"}
		}
		if _, err := lg.AppendBatch("ella", es); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(filepath.Join(v.Root(), ".nexus", "index")); err != nil {
		t.Fatal(err)
	}
	tok, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "serve", "--http", "127.0.0.1:0", "--log-level", "info")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`addr=(\S+)`)
	addr := ""
	for addr == "" && sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("server never said where it listens: %v", sc.Err())
	}
	var lines []string
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	}()

	cs := connectHTTP(t, "http://"+addr+"/mcp", tok, "", nil)
	res := callTool(t, cs, "log_append", map[string]any{"summary": "written while the hub indexes", "key": "turn-1"})
	if res.IsError {
		t.Fatalf("log_append: %v", texts(res))
	}
	last, err := lg.Read(livelog.ReadOptions{Last: 1, From: "lyra"})
	if err != nil || len(last) != 1 || last[0].Summary != "written while the hub indexes" {
		t.Fatalf("lyra's append on disk: %v %+v", err, last)
	}
	cs.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-drained
	if err := cmd.Wait(); err != nil {
		t.Fatalf("after SIGTERM: %v; stderr:\n%v", err, lines)
	}
}
