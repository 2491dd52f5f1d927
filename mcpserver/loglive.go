package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-memory/nexus/vault"
)

// maxLiveLogResource bounds the live-log resource: the tail of the newest
// segment, cut at a line start.
const maxLiveLogResource = 256 << 10

// readLiveLogResource returns the newest segment of the live log (its last
// 256 KiB when it is longer, with a line saying where the rest is).
func (s *Server) readLiveLogResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	dir := s.v.MustPath(vault.LiveLogDir)
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") && strings.HasSuffix(e.Name(), ".md") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	text := ""
	if len(names) > 0 {
		rel, data, err := s.readNote(vault.LiveLogDir + "/" + names[len(names)-1])
		if err != nil {
			return nil, err
		}
		if len(data) > maxLiveLogResource {
			tail := data[len(data)-maxLiveLogResource:]
			if i := bytes.IndexByte(tail, '\n'); i >= 0 {
				tail = tail[i+1:]
			}
			data = append([]byte(fmt.Sprintf("(the last %d bytes of %s; read earlier entries with memory_get or log_read last N)\n\n", len(tail), rel)), tail...)
		}
		text = string(data)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: LiveLogURI, MIMEType: "text/markdown", Text: text}}, nil
}
