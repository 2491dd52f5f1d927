package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

// nexusBin is the nexus binary built once for the stdio end-to-end tests.
var nexusBin string

// cleanupDirs are removed after all tests and benchmarks ran.
var cleanupDirs []string

func TestMain(m *testing.M) {
	if root := os.Getenv(hubChildEnv); root != "" {
		os.Exit(runHubChild(root))
	}
	dir, err := os.MkdirTemp("", "nexus-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	name := "nexus"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	nexusBin = filepath.Join(dir, name)
	out, err := exec.Command("go", "build", "-o", nexusBin, "github.com/nexus-memory/nexus/cmd/nexus").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build nexus: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	for _, d := range cleanupDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// mustVault makes a vault with the named agents.
func mustVault(tb testing.TB, names ...string) *vault.Vault {
	tb.Helper()
	v, _, err := vault.Init(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range names {
		if _, err := agents.Add(v, n, "test agent "+n, time.Now()); err != nil {
			tb.Fatal(err)
		}
	}
	return v
}

// mustWrite writes a vault file for a test (not through Nexus).
func mustWrite(tb testing.TB, v *vault.Vault, rel, text string) {
	tb.Helper()
	p := filepath.Join(v.Root(), filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func newClient(opts *sdk.ClientOptions) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "nexus-test", Version: "1"}, opts)
}

// connectStdio spawns 'nexus --agent AGENT serve --stdio' and connects the
// official SDK client to it.
func connectStdio(tb testing.TB, v *vault.Vault, agent string, opts *sdk.ClientOptions) *sdk.ClientSession {
	tb.Helper()
	cmd := exec.Command(nexusBin, "--vault", v.Root(), "--agent", agent, "serve", "--stdio", "--log-level", "warn")
	cmd.Stderr = &testWriter{tb: tb}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := newClient(opts).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		tb.Fatalf("connect over stdio: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// testWriter sends a child's stderr to the test log.
type testWriter struct{ tb testing.TB }

func (w *testWriter) Write(p []byte) (int, error) {
	w.tb.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startServer serves v over HTTP in-process and returns the server, its
// endpoint URL and a token per agent.
func startServer(tb testing.TB, v *vault.Vault, names ...string) (*mcpserver.Server, string, map[string]string) {
	tb.Helper()
	srv, err := mcpserver.New(mcpserver.Options{Vault: v, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LogPollInterval: 20 * time.Millisecond})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	})
	tokens := map[string]string{}
	for _, n := range names {
		tok, err := identity.NewToken(v, n, true)
		if err != nil {
			tb.Fatal(err)
		}
		tokens[n] = tok
	}
	return srv, hs.URL + mcpserver.EndpointPath, tokens
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct {
	token string
	base  http.RoundTripper
}

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if t.token != "" {
		r.Header.Set("Authorization", "Bearer "+t.token)
	}
	return t.base.RoundTrip(r)
}

func httpClient(token string) *http.Client {
	return &http.Client{Transport: bearerTransport{token: token, base: http.DefaultTransport}}
}

// connectHTTP connects the official SDK client with token; version "" is
// the SDK's latest protocol.
func connectHTTP(tb testing.TB, url, token, version string, opts *sdk.ClientOptions) *sdk.ClientSession {
	tb.Helper()
	cs, err := tryConnectHTTP(url, token, version, opts)
	if err != nil {
		tb.Fatalf("connect over HTTP: %v", err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

func tryConnectHTTP(url, token, version string, opts *sdk.ClientOptions) (*sdk.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient(token), DisableStandaloneSSE: version == "" || version >= "2026"}
	var so *sdk.ClientSessionOptions
	if version != "" {
		so = &sdk.ClientSessionOptions{ProtocolVersion: version}
	}
	return newClient(opts).Connect(ctx, tr, so)
}

// callTool calls a tool and returns the result, failing on protocol errors.
func callTool(tb testing.TB, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// texts returns the text contents of a result.
func texts(res *sdk.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			out = append(out, t.Text)
		}
	}
	return out
}

// mustOK calls a tool that must succeed and decodes its JSON result.
func mustOK(tb testing.TB, cs *sdk.ClientSession, name string, args map[string]any) map[string]any {
	tb.Helper()
	res := callTool(tb, cs, name, args)
	ts := texts(res)
	if res.IsError || len(ts) == 0 {
		tb.Fatalf("%s(%v): tool error: %v", name, args, ts)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(ts[0]), &m); err != nil {
		tb.Fatalf("%s: result is not a JSON object: %v\n%s", name, err, ts[0])
	}
	return m
}

// mustFail calls a tool that must fail with a tool error whose text holds
// every one of want, and returns the error text.
func mustFail(tb testing.TB, cs *sdk.ClientSession, name string, args map[string]any, want ...string) string {
	tb.Helper()
	res := callTool(tb, cs, name, args)
	ts := texts(res)
	if !res.IsError {
		tb.Fatalf("%s(%.200v): succeeded, want a tool error: %v", name, args, ts)
	}
	all := strings.Join(ts, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			tb.Errorf("%s error %q lacks %q", name, all, w)
		}
	}
	return all
}

// snapshotTree returns every file under the vault except .nexus/state
// (caches and locks), with contents, to check that nothing was written.
func snapshotTree(tb testing.TB, v *vault.Vault) map[string]string {
	tb.Helper()
	out := map[string]string{}
	filepath.WalkDir(v.Root(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(v.Root(), p)
		rel = filepath.ToSlash(rel)
		// Machine-local state and derived files the server's keeper
		// rewrites in the background, whatever a call did.
		if strings.HasPrefix(rel, ".nexus/state/") || strings.HasPrefix(rel, ".nexus/index/") || rel == vault.TimelineFile || strings.HasPrefix(rel, "log/.timeline.local.md.tmp-") {
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func sameTree(tb testing.TB, before, after map[string]string) {
	tb.Helper()
	for k, v := range after {
		if b, ok := before[k]; !ok {
			tb.Errorf("file %s was created", k)
		} else if b != v {
			tb.Errorf("file %s changed", k)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			tb.Errorf("file %s was removed", k)
		}
	}
}

// execNexus runs the built nexus binary on a vault.
func execNexus(vaultDir string, args ...string) ([]byte, error) {
	return exec.Command(nexusBin, append([]string{"--vault", vaultDir}, args...)...).CombinedOutput()
}
