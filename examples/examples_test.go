// Package examples runs every example, so none of them can rot: the
// two-agents story script, the MCP client configs for Claude Code, Hermes
// and OpenClaw (each launched or connected for real), and the Go library
// example.
package examples

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"go.yaml.in/yaml/v3"
)

// nexusBin is the nexus binary built once by TestMain.
var nexusBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "nexus-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nexusBin = filepath.Join(dir, "nexus")
	if runtime.GOOS == "windows" {
		nexusBin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", nexusBin, "../cmd/nexus").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildNexus returns the binary TestMain built.
func buildNexus(t *testing.T) string {
	t.Helper()
	return nexusBin
}

// nexus runs the binary and returns its combined output.
func nexus(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// No background index holder after a search: the vault is a temp
	// folder, deleted when the test ends.
	cmd.Env = append(os.Environ(), "NEXUS_SEARCH_HOLD=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nexus %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// newVault makes a vault with the agents the configs name.
func newVault(t *testing.T, bin string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	nexus(t, bin, "init", dir)
	for _, a := range []string{"lyra", "ella", "claude"} {
		nexus(t, bin, "--vault", dir, "agent", "add", a)
	}
	return dir
}

func TestTwoAgentsStory(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the story is a POSIX shell script")
	}
	bin := buildNexus(t)
	dir := filepath.Join(t.TempDir(), "story")
	cmd := exec.Command("sh", "two-agents/story.sh", dir)
	cmd.Env = append(os.Environ(), "NEXUS="+bin, "STEP=0", "APPENDS=15", "NEXUS_AGENT=", "NEXUS_SEARCH_HOLD=0")
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("story.sh: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"Unread log entries (1)",                        // ella's morning session shows the handoff
		"Nothing new for ella.",                         // after the ack
		"She resumes at step 7, not at step 1:",         // the checkpoint
		"[[prefers-korean-first|Prefers Korean first]]", // the approved fact in the memory index
		"All checks passed.",                            // doctor
	} {
		if !strings.Contains(text, want) {
			t.Errorf("story output lacks %q", want)
		}
	}
	// Scene 5: every entry once; the log verifies.
	verify := nexus(t, bin, "--vault", dir, "--json", "log", "verify")
	var rep struct {
		Entries  int              `json:"entries"`
		Findings []map[string]any `json:"findings"`
	}
	if err := json.Unmarshal([]byte(verify), &rep); err != nil {
		t.Fatalf("log verify --json: %v\n%s", err, verify)
	}
	// 1 handoff + 2 x 15 appends in the live log, 2 decisions.
	if rep.Entries != 1+30+2 || len(rep.Findings) != 0 {
		t.Errorf("log verify: %d entries, findings %v; want 33 and none", rep.Entries, rep.Findings)
	}
	entries := nexus(t, bin, "--vault", dir, "--json", "log", "read", "--channel", "load", "--last", "0")
	for _, who := range []string{"lyra", "ella"} {
		for i := 1; i <= 15; i++ {
			if n := strings.Count(entries, fmt.Sprintf("%q", fmt.Sprintf("%s entry %d", who, i))); n != 1 {
				t.Errorf("%s entry %d appears %d times", who, i, n)
			}
		}
	}
	// Scene 6: both searches hit the handoff.
	for _, q := range []string{"login timeout", "로그인"} {
		if hits := nexus(t, bin, "--vault", dir, "search", q); !strings.Contains(hits, "log/live/") || !strings.Contains(hits, "API gateway") {
			t.Errorf("search %q misses the handoff:\n%s", q, hits)
		}
	}
}

// mcpServer is one server entry of an MCP client config, in the shape the
// three clients share.
type mcpServer struct {
	Type    string            `json:"type" yaml:"type"`
	Command string            `json:"command" yaml:"command"`
	Args    []string          `json:"args" yaml:"args"`
	Env     map[string]string `json:"env" yaml:"env"`
	URL     string            `json:"url" yaml:"url"`
	Headers map[string]string `json:"headers" yaml:"headers"`
}

// configs reads every example config and returns its servers by a label.
func configs(t *testing.T) map[string]mcpServer {
	t.Helper()
	all := map[string]mcpServer{}
	read := func(path string, unmarshal func([]byte, any) error, pick func(any) map[string]mcpServer, into any) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		servers := pick(into)
		if len(servers) == 0 {
			t.Fatalf("%s: no MCP servers", path)
		}
		for name, s := range servers {
			all[path+"#"+name] = s
		}
	}
	for _, p := range []string{"claude-code/.mcp.json", "claude-code/mcp-http.json"} {
		var c struct {
			MCPServers map[string]mcpServer `json:"mcpServers"`
		}
		read(p, json.Unmarshal, func(any) map[string]mcpServer { return c.MCPServers }, &c)
	}
	var oc struct {
		MCP struct {
			Servers map[string]mcpServer `json:"servers"`
		} `json:"mcp"`
	}
	read("openclaw/openclaw.json", json.Unmarshal, func(any) map[string]mcpServer { return oc.MCP.Servers }, &oc)
	var hc struct {
		MCPServers map[string]mcpServer `yaml:"mcp_servers"`
	}
	read("hermes/config.yaml", yaml.Unmarshal, func(any) map[string]mcpServer { return hc.MCPServers }, &hc)
	// The commented-out HTTP entry of the Hermes config is checked too.
	data, _ := os.ReadFile("hermes/config.yaml")
	var uncommented []string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "  # nexus-http:") {
			in = true
		}
		if in && strings.HasPrefix(l, "  #") {
			uncommented = append(uncommented, "  "+strings.TrimPrefix(l, "  # "))
		}
	}
	var hh struct {
		MCPServers map[string]mcpServer `yaml:"mcp_servers"`
	}
	if err := yaml.Unmarshal([]byte("mcp_servers:\n"+strings.Join(uncommented, "\n")), &hh); err != nil || hh.MCPServers["nexus-http"].URL == "" {
		t.Fatalf("hermes/config.yaml: commented HTTP entry does not parse: %v", err)
	}
	all["hermes/config.yaml#nexus-http"] = hh.MCPServers["nexus-http"]
	return all
}

// TestMCPConfigs launches (stdio) or connects to (HTTP) the Nexus server
// exactly as each example config says, and lists its tools.
func TestMCPConfigs(t *testing.T) {
	bin := buildNexus(t)
	dir := newVault(t, bin)
	addr := startHTTP(t, bin, dir)
	tokens := map[string]string{}
	for label, s := range configs(t) {
		t.Run(label, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var c *client.Client
			var err error
			switch {
			case s.Command != "":
				if s.Command != "nexus" || len(s.Args) < 1 || s.Args[0] != "serve" {
					t.Fatalf("command %q %v: want nexus serve ...", s.Command, s.Args)
				}
				if _, ok := s.Env["NEXUS_VAULT"]; !ok {
					t.Errorf("no NEXUS_VAULT in env %v", s.Env)
				}
				c, err = client.NewStdioMCPClient(bin, []string{"NEXUS_VAULT=" + dir}, s.Args...)
			case s.URL != "":
				u, perr := url.Parse(s.URL)
				if perr != nil || u.Path != "/mcp" || u.Scheme != "http" {
					t.Fatalf("url %q: want http://HOST:PORT/mcp", s.URL)
				}
				auth := s.Headers["Authorization"]
				if !strings.HasPrefix(auth, "Bearer ") {
					t.Fatalf("Authorization header %q: want Bearer TOKEN", auth)
				}
				agent := "lyra"
				if strings.Contains(label, "openclaw") {
					agent = "ella"
				} else if strings.Contains(label, "claude") {
					agent = "claude"
				}
				if tokens[agent] == "" {
					tokens[agent] = strings.TrimSpace(nexus(t, bin, "--vault", dir, "--json", "agent", "token", agent))
					var tok struct {
						Token string `json:"token"`
					}
					if json.Unmarshal([]byte(tokens[agent]), &tok) == nil && tok.Token != "" {
						tokens[agent] = tok.Token
					}
				}
				u.Host = addr
				c, err = client.NewStreamableHttpClient(u.String(), transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tokens[agent]}))
				if err == nil {
					err = c.Start(ctx)
				}
			default:
				t.Fatal("neither command nor url")
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			req := mcp.InitializeRequest{}
			req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
			req.Params.ClientInfo = mcp.Implementation{Name: "examples-test", Version: "1"}
			if _, err := c.Initialize(ctx, req); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			for _, want := range []string{"memory", "log_append", "log_read", "memory_search", "checkpoint_load", "retain"} {
				if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
					t.Errorf("tool %s missing from %v", want, names)
				}
			}
		})
	}
}

// startHTTP runs 'nexus serve --http' on a free loopback port until the
// test ends, and returns its address.
func startHTTP(t *testing.T, bin, dir string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "--vault", dir, "serve", "--http", addr)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		select {
		case <-done:
			t.Fatalf("nexus serve --http exited:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestGoLibrary(t *testing.T) {
	bin := buildNexus(t)
	dir := filepath.Join(t.TempDir(), "lib")
	out, err := exec.Command("go", "run", "./go-library", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./go-library: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"ella reads: ", // lyra's signed entry reached ella
		"lyra [deploy/shipped] Fixed the login timeout",
		"[[release-calendar|Release calendar]]", // the fact in ella's snapshot
		"Staging deploys go through lyra",       // her bounded memory
	} {
		if !strings.Contains(text, want) {
			t.Errorf("go-library output lacks %q:\n%s", want, text)
		}
	}
	if doc := nexus(t, bin, "--vault", dir, "doctor"); !strings.Contains(doc, "All checks passed.") {
		t.Errorf("the library example's vault is not healthy:\n%s", doc)
	}
	// Run again in the same folder, as its doc comment invites: the
	// agents and the fact are there already, and that is no error.
	out, err = exec.Command("go", "run", "./go-library", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "lyra [deploy/shipped] Fixed the login timeout") {
		t.Fatalf("second go run ./go-library in the same folder: %v\n%s", err, out)
	}
	if doc := nexus(t, bin, "--vault", dir, "doctor"); !strings.Contains(doc, "All checks passed.") {
		t.Errorf("after a second run, the library example's vault is not healthy:\n%s", doc)
	}
}
