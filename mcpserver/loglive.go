package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxLiveLogResource bounds the live-log resource's text.
const maxLiveLogResource = 256 << 10

// readLiveLogResource returns the newest entries of every feed, merged in
// the log's order (the derived timeline, see livelog.Log.Timeline),
// clipped at a line start to its last 256 KiB.
func (s *Server) readLiveLogResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	text, err := s.lg.Timeline(0)
	if err != nil {
		return nil, err
	}
	if len(text) > maxLiveLogResource {
		tail := text[len(text)-maxLiveLogResource:]
		if i := strings.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		text = fmt.Sprintf("(the last %d bytes of the timeline; read earlier entries with log_read last N)\n\n", len(tail)) + tail
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: LiveLogURI, MIMEType: "text/markdown", Text: text}}, nil
}
