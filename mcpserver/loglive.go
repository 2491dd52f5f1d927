package mcpserver

import (
	"context"
	"os"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-memory/nexus/vault"
)

// readLiveLogResource returns the newest segment of the live log.
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
		_, data, err := s.readNote(vault.LiveLogDir + "/" + names[len(names)-1])
		if err != nil {
			return nil, err
		}
		text = string(data)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: LiveLogURI, MIMEType: "text/markdown", Text: text}}, nil
}
