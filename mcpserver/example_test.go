package mcpserver_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/mcpserver"
	"github.com/nexus-memory/nexus/vault"
)

// ExampleServer_Handler embeds the MCP server in another HTTP server. Each
// request must carry an agent's bearer token.
func ExampleServer_Handler() {
	dir, _ := os.MkdirTemp("", "nexus-example-")
	defer os.RemoveAll(dir)
	v, _, _ := vault.Init(dir)
	agents.Add(v, "lyra", "Research lead", time.Now())
	token, _ := identity.NewToken(v, "lyra", false)

	srv, err := mcpserver.New(mcpserver.Options{Vault: v})
	if err != nil {
		panic(err)
	}
	defer srv.Close(context.Background())
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`
	for _, auth := range []string{"", "Bearer " + token} {
		req, _ := http.NewRequest("POST", hs.URL+mcpserver.EndpointPath, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	// Output:
	// 401
	// 200
}
