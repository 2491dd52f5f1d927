//go:build !lite

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/version"
	"github.com/nexus-memory/nexus/vault"
)

func TestServeUsageErrors(t *testing.T) {
	dir := factVault(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--stdio"}, "no agent"},
		{[]string{"--agent", "lyra", "serve", "--stdio", "--http", "127.0.0.1:0"}, "not both"},
		{[]string{"serve", "--http", "0.0.0.0:7777"}, "--tls-cert"},
		{[]string{"serve", "--http", ":7777"}, "non-loopback"},
		{[]string{"--agent", "lyra", "serve", "--tls-cert", "c.pem"}, "go with --http"},
		{[]string{"--agent", "lyra", "serve", "--log-level", "loud"}, "--log-level"},
		{[]string{"--agent", "lyra", "serve", "--idle", "10m"}, "go with --http"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--idle", "-1s"}, "--idle"},
		{[]string{"--agent", "lyra", "serve", "--memory", "16MiB"}, "--memory"},
		{[]string{"serve", "--http", "127.0.0.1:0", "--memory", "lots"}, "--memory"},
		{[]string{"serve", "extra"}, ""},
	} {
		code, _, errOut := factCLI(t, "", append([]string{"--vault", dir}, tt.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: code %d, stderr %q; want 2 and %q", tt.args, code, errOut, tt.want)
		}
	}
	if code, _, errOut := factCLI(t, "", "--vault", dir, "--agent", "ghost", "serve"); code != exitRefused || !strings.Contains(errOut, "ghost") {
		t.Errorf("unknown agent: code %d, %q", code, errOut)
	}
	if code, out, _ := factCLI(t, "", "serve", "--help"); code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "memory_search") {
		t.Errorf("serve --help: %d %q", code, out)
	}
}

// TestServeStdioInProcess speaks MCP to 'nexus serve --stdio' through pipes.
func TestServeStdioInProcess(t *testing.T) {
	dir := factVault(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--vault", dir, "--agent", "lyra", "serve", "--stdio", "--log-level", "debug"}, inR, outW, &errb)
		outW.Close()
	}()
	r := bufio.NewReader(outR)
	rpc := func(id int, method, params string) map[string]any {
		t.Helper()
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: stdout is not JSON-RPC: %q", method, line)
		}
		return m
	}
	hello := rpc(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	// serverInfo carries the version 'nexus version' prints.
	if r, _ := hello["result"].(map[string]any); r == nil {
		t.Fatalf("initialize: %v", hello)
	} else if si, _ := r["serverInfo"].(map[string]any); si["name"] != "nexus" || si["version"] != version.String() {
		t.Errorf("serverInfo %v, want nexus %s", si, version.String())
	}
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tools := rpc(2, "tools/list", `{}`)
	b, _ := json.Marshal(tools)
	for _, name := range []string{"memory", "memory_search", "log_read", "retain"} {
		if !strings.Contains(string(b), `"name":"`+name+`"`) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	res := rpc(3, "tools/call", `{"name":"memory","arguments":{"action":"add","content":"served in-process"}}`)
	if r, _ := res["result"].(map[string]any); r == nil || r["isError"] == true {
		t.Fatalf("memory add: %v\n%s", res, errb.String())
	}
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not end at EOF")
	}
	if !strings.Contains(errb.String(), "serving MCP on stdio") {
		t.Errorf("no log on stderr: %q", errb.String())
	}
}

// TestServeHTTPInProcess runs 'nexus serve --http 127.0.0.1:0' until its
// context ends.
func TestServeHTTPInProcess(t *testing.T) {
	dir := factVault(t)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	token, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	addrc := make(chan net.Addr, 1)
	serveReady = func(a net.Addr) { addrc <- a }
	defer func() { serveReady = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--vault", dir, "serve", "--http", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, &errb)
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("serve ended early (%d): %s", code, errb.String())
	}
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", "http://"+addr.String()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := post("Bearer " + token); got != http.StatusOK {
		t.Errorf("with token: %d", got)
	}
	if got := post(""); got != http.StatusUnauthorized {
		t.Errorf("without token: %d", got)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d after cancel: %s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}

// TestServeHTTPIdleExit: with --idle the server ends by itself once no
// request has come for that long, after answering the ones that came.
func TestServeHTTPIdleExit(t *testing.T) {
	dir := factVault(t)
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	token, err := identity.NewToken(v, "lyra", false)
	if err != nil {
		t.Fatal(err)
	}
	addrc := make(chan net.Addr, 1)
	serveReady = func(a net.Addr) { addrc <- a }
	defer func() { serveReady = nil }()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--vault", dir, "serve", "--http", "127.0.0.1:0", "--idle", "300ms"}, strings.NewReader(""), io.Discard, &errb)
	}()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case code := <-done:
		t.Fatalf("serve ended early (%d): %s", code, errb.String())
	}
	req, _ := http.NewRequest("POST", "http://"+addr.String()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("initialize: %d", resp.StatusCode)
	}
	// No cancel: the server must end on its own.
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d when idle: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "no request for the idle time") {
		t.Errorf("the idle exit is not logged: %s", errb.String())
	}
}
