//go:build unix

package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
)

// TestStdioSIGTERMLetsWritesFinish: SIGTERM during a burst of writes ends
// the server with status 0; every write it acknowledged is on disk, and
// nothing on disk is torn.
func TestStdioSIGTERMLetsWritesFinish(t *testing.T) {
	v := mustVault(t, "lyra")
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "--agent", "lyra", "serve", "--stdio", "--log-level", "warn")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = &testWriter{tb: t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const n = 20
	for i := 1; i <= n; i++ {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory","arguments":{"action":"add","content":"entry number %d"}}}`+"\n", i, i)
	}
	acked := map[string]bool{}
	first, err := r.ReadString('\n') // one write done, others in flight
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for line := first; ; {
		if err != nil {
			break
		}
		var m struct {
			ID     int `json:"id"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID > 0 && !m.Result.IsError && strings.Contains(line, `"success`) {
			acked[fmt.Sprintf("entry number %d", m.ID)] = true
		}
		if line, err = r.ReadString('\n'); err != nil {
			break
		}
	}
	if len(acked) == 0 {
		t.Fatalf("no write acknowledged; first answer: %s", first)
	}
	in.Close()
	if err := waitExit(cmd); err != nil {
		t.Fatalf("server exit after SIGTERM: %v", err)
	}
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	entries, err := m.Entries()
	if err != nil {
		t.Fatal(err)
	}
	onDisk := map[string]bool{}
	for _, e := range entries {
		if !regexp.MustCompile(`^entry number \d+$`).MatchString(e) {
			t.Errorf("torn entry %q", e)
		}
		onDisk[e] = true
	}
	for e := range acked {
		if !onDisk[e] {
			t.Errorf("acknowledged write %q is not on disk", e)
		}
	}
	t.Logf("%d writes acknowledged, %d on disk", len(acked), len(entries))
}

// TestHTTPServeBinarySIGTERM runs 'nexus serve --http 127.0.0.1:0' as a
// process, calls it with two agents' tokens, and stops it with SIGTERM.
func TestHTTPServeBinarySIGTERM(t *testing.T) {
	v := mustVault(t, "lyra", "ella")
	lyraTok, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "serve", "--http", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addrc := make(chan string, 1)
	var logMu sync.Mutex
	var logs strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`addr=(\S+)`)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case addrc <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(30 * time.Second):
		t.Fatal("server never said where it listens")
	}
	url := "http://" + addr + "/mcp"
	cs, err := tryConnectHTTP(url, lyraTok, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, cs, "log_append", map[string]any{"summary": "over real HTTP"})
	if _, err := tryConnectHTTP(url, "nxs_nope", "", nil); err == nil {
		t.Error("bad token accepted by the binary")
	}
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "memory", Arguments: map[string]any{"action": "add", "content": fmt.Sprintf("http entry %d", i)}})
		}()
	}
	cmd.Process.Signal(syscall.SIGTERM)
	wg.Wait()
	cs.Close()
	if err := waitExit(cmd); err != nil {
		logMu.Lock()
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	m, _ := agents.OpenMemory(v, "lyra", agents.TargetMemory)
	entries, _ := m.Entries()
	for _, e := range entries {
		if !regexp.MustCompile(`^http entry \d$`).MatchString(e) {
			t.Errorf("torn entry %q", e)
		}
	}
}

// TestStdioClientVanishes: the client dies mid-call (both pipes close).
// The server finishes what it started and exits cleanly instead of being
// killed by SIGPIPE halfway through other writes.
func TestStdioClientVanishes(t *testing.T) {
	v := mustVault(t, "lyra")
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "--agent", "lyra", "serve", "--stdio", "--log-level", "error")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	fmt.Fprintln(in, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if _, err := r.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"log_append","arguments":{"summary":"entry %d"}}}`+"\n", i, i)
	}
	out.Close() // the client is gone: nobody reads the answers
	in.Close()
	if err := waitExit(cmd); err != nil {
		t.Fatalf("server after its client vanished: %v", err)
	}
	out2, err := execNexus(v.Root(), "log", "verify")
	if err != nil {
		t.Fatalf("log verify after the client vanished: %v\n%s", err, out2)
	}
}

// waitExit waits for a server process to end by itself, killing it after
// 30 s; it returns the exit error, or a timeout error.
func waitExit(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		return errors.New("did not exit within 30 s")
	}
}
