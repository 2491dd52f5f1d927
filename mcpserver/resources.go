package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-memory/nexus/vault"
)

// Resource URIs.
const (
	// NoteURIPrefix starts the URI of every vault note: the vault-relative
	// path follows, each segment percent-encoded.
	NoteURIPrefix = "nexus://vault/"
	// LiveLogURI is the live log as one resource. Subscribe to it to be
	// notified (notifications/resources/updated) when an agent appends.
	LiveLogURI = "nexus://log/live"
	// SessionStartURI is the calling agent's session-start text (the
	// session_start prompt), for clients that attach resources but not
	// prompts.
	SessionStartURI = "nexus://session/start"
)

// rescanAfter is how stale the resource list may be before resources/list
// walks the vault again.
const rescanAfter = 2 * time.Second

// NoteURI returns the resource URI of a vault-relative note path.
func NoteURI(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return NoteURIPrefix + strings.Join(segs, "/")
}

// resourceList keeps the MCP resource list in step with the vault's notes.
type resourceList struct {
	mu      sync.Mutex // protects scanned and listed; held while scanning
	scanned time.Time
	listed  map[string]bool // URIs registered with the MCP server
}

func (s *Server) addResources(hooks *server.Hooks) {
	s.res = &resourceList{listed: map[string]bool{}}
	s.mcp.AddResource(mcp.NewResource(LiveLogURI, "Live log",
		mcp.WithResourceDescription("The shared live-context log: what every agent did and said, newest last. Subscribe to be told when another agent appends; then call log_read."),
		mcp.WithMIMEType("text/markdown")), s.readLiveLogResource)
	s.mcp.AddResource(mcp.NewResource(SessionStartURI, "Session start",
		mcp.WithResourceDescription("Your frozen snapshot for this session: identity, MEMORY, USER, memory index, unread log entries, latest checkpoint, current decisions. The same text as the session_start prompt."),
		mcp.WithMIMEType("text/markdown")), s.readSessionStartResource)
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(NoteURIPrefix+"{+path}", "Vault note",
		mcp.WithTemplateDescription("A markdown note of the vault by its vault-relative path (segments percent-encoded). .nexus/ and other dot-folders are not readable."),
		mcp.WithTemplateMIMEType("text/markdown")), s.readNoteResource)
	hooks.AddBeforeListResources(func(ctx context.Context, id any, _ *mcp.ListResourcesRequest) {
		s.refreshResources()
	})
}

// refreshResources registers every markdown note outside dot-folders as a
// resource, at most once per rescanAfter.
func (s *Server) refreshResources() {
	r := s.res
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.scanned) < rescanAfter {
		return
	}
	notes, err := s.listNotes()
	if err != nil {
		s.log.Warn("list vault notes", "err", err)
		return
	}
	r.scanned = time.Now()
	seen := make(map[string]bool, len(notes))
	var add []server.ServerResource
	for _, rel := range notes {
		uri := NoteURI(rel)
		seen[uri] = true
		if r.listed[uri] {
			continue
		}
		add = append(add, server.ServerResource{
			Resource: mcp.NewResource(uri, rel, mcp.WithMIMEType("text/markdown")),
			Handler:  s.readNoteResource,
		})
	}
	var gone []string
	for uri := range r.listed {
		if !seen[uri] {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		s.mcp.DeleteResources(gone...)
	}
	if len(add) > 0 {
		s.mcp.AddResources(add...)
	}
	r.listed = seen
}

// listNotes returns the vault-relative paths of every .md file outside
// dot-folders, sorted. Symlinks are not followed.
func (s *Server) listNotes() ([]string, error) {
	var out []string
	root := s.v.Root()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if p == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.EqualFold(path.Ext(d.Name()), ".md") {
			return nil
		}
		if rel, err := s.v.Rel(p); err == nil {
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func (s *Server) readSessionStartResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	agent, ok := agentFrom(ctx)
	if !ok {
		return nil, ErrNoAgent
	}
	text, _, err := s.sessionStart(ctx, agent)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: SessionStartURI, MIMEType: "text/markdown", Text: text}}, nil
}

func (s *Server) readNoteResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, NoteURIPrefix)
	if !ok {
		return nil, fmt.Errorf("resource %q: not a vault note URI (want %sPATH): %w", uri, NoteURIPrefix, server.ErrResourceNotFound)
	}
	rel, err := url.PathUnescape(rest)
	if err != nil {
		return nil, fmt.Errorf("resource %q: bad percent-encoding: %w", uri, vault.ErrInvalid)
	}
	clean, data, err := s.readNote(rel)
	if err != nil {
		if errors.Is(err, vault.ErrNotFound) {
			return nil, fmt.Errorf("%s: %w", describe(err), server.ErrResourceNotFound)
		}
		return nil, errors.New(describe(err))
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: NoteURI(clean), MIMEType: "text/markdown", Text: string(data)}}, nil
}

// liveLogStamp identifies the state of the live log's files cheaply (names,
// sizes and times of log/live/*.md and the feeds log/live/YYYY-MM/*.md),
// to notice appends by any process.
func (s *Server) liveLogStamp() string {
	var b strings.Builder
	var walk func(rel string, depth int)
	walk = func(rel string, depth int) {
		entries, err := vault.ReadDir(s.v.MustPath(rel))
		if err != nil {
			return
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if e.IsDir() && depth == 0 {
				walk(rel+"/"+e.Name(), 1)
				continue
			}
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			fmt.Fprintf(&b, "%s/%s:%d:%d;", rel, e.Name(), info.Size(), info.ModTime().UnixNano())
		}
	}
	walk(vault.LiveLogDir, 0)
	return b.String()
}

// liveLogChanged invalidates the unread counts and tells the live log's
// subscribers that have something new to read — entries by other agents or
// a person; an agent's own appends never are — about the change.
func (s *Server) liveLogChanged() {
	s.unread.invalidate()
	s.subs.notify(s.mcp, LiveLogURI, s.log, func(agent string) (news bool) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("count unread log entries panicked", "agent", agent, "panic", r)
				news = true // tell it anyway; log_read will sort it out
			}
		}()
		return s.unreadCount(agent) > 0
	})
}

// watchLiveLog polls the live log and notifies subscribers of LiveLogURI
// when it changes. It returns when ctx is done.
func (s *Server) watchLiveLog(ctx context.Context) {
	t := time.NewTicker(s.opts.LogPollInterval)
	defer t.Stop()
	last := s.liveLogStamp()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if cur := s.liveLogStamp(); cur != last {
			last = cur
			s.liveLogChanged()
		}
	}
}
