// Package holder is the wire between the process that holds a vault's
// search index (nexus watch, nexus serve, the background nexus index
// hold) and the processes that ask it: where it answers (serve.json and
// holder.sock in .nexus/index), what they send (a [Query]) and what it
// answers ([Results], [Progress]).
//
// It links no search engine, so that a program asking a holder — the
// lean build of the CLI, nexus-lite — does not pay for one. Package index
// holds the index, serves this protocol and re-exports these types.
package holder

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// Files in the index folder (.nexus/index).
const (
	// ServeFile says where the holder answers: an [Info], mode 0600.
	ServeFile = "serve.json"
	// SockFile is the unix socket a holder answers on, next to
	// serve.json. A socket is reached through the file system, so
	// processes that share only the vault's files (containers with the
	// vault mounted, separate network namespaces) find the holder where a
	// loopback address would not reach it. Loopback TCP stays as the
	// fallback: a socket path too long for the system (about 104 bytes),
	// a file system that cannot hold sockets, an older Windows.
	SockFile = "holder.sock"
	// MaxSockPath is the longest socket path used (sun_path is 104 bytes
	// on macOS and the BSDs, 108 on Linux, both with the terminating NUL).
	MaxSockPath = 103
)

// Version changes whenever what a holder answers changes (the index
// schema or the Results format), so that a newer Nexus does not keep a
// background holder of an older one alive: the index schema version times
// 100 plus this wire's own version (package index checks it).
// Wire version 2 added keep-alive lines ([Reply].Alive).
const Version = 1502

// Info is serve.json: where the holder answers.
type Info struct {
	Addr    string `json:"addr"`
	Token   string `json:"token"`
	PID     int    `json:"pid"`
	Version int    `json:"version,omitempty"` // Version of the holder's Nexus
	Yields  bool   `json:"yields,omitempty"`  // it steps down when asked
	Sock    bool   `json:"sock,omitempty"`    // it also answers on SockFile
	// KeepAliveMS is how often, in milliseconds, the holder sends a
	// keep-alive line while it works on a request; 0 for a holder of an
	// older Nexus, which sends none (a call to it waits as long as its
	// context lets it).
	KeepAliveMS int `json:"keep_alive_ms,omitempty"`
}

// Reply is one line of a reply: progress and keep-alive lines, then the
// result or the error.
type Reply struct {
	Progress *Progress       `json:"progress,omitempty"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Invalid  bool            `json:"invalid,omitempty"` // the error wraps vault.ErrInvalid
	// Alive marks a keep-alive line: the holder is still working on the
	// request. A holder sends one every [Info].KeepAliveMS while it
	// works, so that a long call (a rebuild, catching up on a big vault)
	// is told from a holder that stopped answering. It carries
	// [AliveError] in Error, which a client of wire version 2 or later
	// ignores: a client that predates keep-alives (it asks a holder of
	// another version that does not step down, such as nexus watch)
	// takes that line for the answer, and then fails saying why instead
	// of reporting a sync or rebuild done that is not.
	Alive bool `json:"alive,omitempty"`
}

// AliveError is the Error of a keep-alive line, for clients that do not
// know keep-alives.
const AliveError = "the index holder runs a newer Nexus, which this one cannot wait for: update Nexus, or restart the holder with this version"

// Client asks a holder. Its methods may be called concurrently.
type Client struct {
	info Info
	hc   *http.Client
	host string // host:port in request URLs (a placeholder over the socket)
}

// pingTimeout bounds the check that a holder answers: a holder that is
// stopped (SIGSTOP, a debugger) or hung still has its socket accepting
// connections, and a ping without a bound would wait forever.
var pingTimeout = 3 * time.Second

// idleBeats is how many keep-alive intervals ([Info].KeepAliveMS) a call
// waits for a sign of life from the holder — the response header, then
// any line — before it gives up on it: 10 s at the holder's 1 s. Missing
// ten beats in a row is no slow holder (a busy one still beats: its
// keep-alives come from their own goroutine) but a stopped or hung one.
const idleBeats = 10

// idleTimeout is how long a call waits for a sign of life from the
// holder; 0 for a holder that sends no keep-alives.
func (c *Client) idleTimeout() time.Duration {
	return idleBeats * time.Duration(c.info.KeepAliveMS) * time.Millisecond
}

// Dial reads serve.json in the index folder dir and checks that the
// holder answers: over its socket first, else loopback TCP. An error
// means there is no holder to ask (none runs, or it does not answer
// within a few seconds).
func Dial(dir string) (*Client, error) {
	data, err := vault.ReadFile(filepath.Join(dir, ServeFile)) // through the vault root: serve.json may be a link out
	if err != nil {
		return nil, err
	}
	var info Info
	if err := json.Unmarshal(data, &info); err != nil || info.Addr == "" {
		return nil, fmt.Errorf("read %s: bad content", ServeFile)
	}
	if info.Sock {
		// The path is this process's own view of the folder, which may
		// differ from the holder's (another mount).
		sock := filepath.Join(dir, SockFile)
		var d net.Dialer
		tr := &http.Transport{DisableCompression: true, MaxIdleConns: 4, DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		}}
		c := &Client{info: info, hc: &http.Client{Transport: tr}, host: "nexus-index"}
		if len(sock) <= MaxSockPath {
			err := c.ping()
			if err == nil {
				return c, nil
			}
			c.Close()
			if errors.As(err, new(silentError)) {
				// The holder took the connection and said nothing: it is
				// stopped or hung, and would say nothing over TCP either.
				return nil, err
			}
		}
	}
	c := &Client{info: info, hc: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConns: 4}}, host: info.Addr}
	if err := c.ping(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) ping() error {
	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	err := c.Call(ctx, "ping", struct{}{}, nil, nil)
	if IsConnError(err) && ctx.Err() != nil {
		return ConnError{silentError(fmt.Sprintf("index holder (pid %d) did not answer a ping within %v (stopped or hung?)", c.info.PID, pingTimeout))}
	}
	return err
}

// silentError is a holder that was reached and did not answer in time.
type silentError string

func (e silentError) Error() string { return string(e) }

// DialVault is [Dial] for the index folder of v.
func DialVault(v *vault.Vault) (*Client, error) {
	return Dial(filepath.Join(v.Root(), filepath.FromSlash(vault.IndexDir)))
}

// Info is what the holder's serve.json said.
func (c *Client) Info() Info { return c.info }

// Close lets go of the client's connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// errIdle cancels a call whose holder stopped sending.
var errIdle = errors.New("holder idle")

// Call posts in to the holder's op ("search", "status", "sync", "notify",
// "rebuild", "yield", "ping") and decodes its result into out (when not
// nil); progress lines go to progress. A failure to reach the holder is
// a [ConnError]; an error the holder answered is returned as it said it
// (wrapping [vault.ErrInvalid] when it did).
//
// A call may take as long as the holder's work does (a rebuild of a big
// vault takes minutes), but a holder that sends keep-alives and falls
// silent for ten of their intervals (10 s) — stopped, hung — is given up
// on with a ConnError; ctx can end the call sooner.
func (c *Client) Call(ctx context.Context, op string, in, out any, progress func(Progress)) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	alive := func() {}
	if idle := c.idleTimeout(); idle > 0 {
		t := time.AfterFunc(idle, func() { cancel(errIdle) })
		defer t.Stop()
		alive = func() { t.Reset(idle) }
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+c.host+"/"+op, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.info.Token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.connError(ctx, err)
	}
	defer resp.Body.Close()
	alive()
	if resp.StatusCode != http.StatusOK {
		return ConnError{fmt.Errorf("index holder answered %s", resp.Status)}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		alive()
		var rep Reply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			return fmt.Errorf("index holder: bad reply: %w", err)
		}
		if rep.Alive {
			continue
		}
		if rep.Progress != nil {
			if progress != nil {
				progress(*rep.Progress)
			}
			continue
		}
		if rep.Error != "" {
			if rep.Invalid {
				return fmt.Errorf("%s: %w", rep.Error, vault.ErrInvalid)
			}
			return errors.New(rep.Error)
		}
		if out != nil {
			return json.Unmarshal(rep.Result, out)
		}
		return nil
	}
	if err := sc.Err(); err != nil {
		return c.connError(ctx, err)
	}
	return ConnError{io.ErrUnexpectedEOF}
}

// connError is the ConnError for err, a failure of a call with ctx: one
// that says so when the holder fell silent.
func (c *Client) connError(ctx context.Context, err error) error {
	if context.Cause(ctx) == errIdle {
		return ConnError{fmt.Errorf("index holder (pid %d) sent nothing for %v (stopped or hung?)", c.info.PID, c.idleTimeout())}
	}
	return ConnError{err}
}

// Search asks the holder to run q.
func (c *Client) Search(ctx context.Context, q Query) (*Results, error) {
	var res Results
	if err := c.Call(ctx, "search", q, &res, nil); err != nil {
		return nil, err
	}
	return &res, nil
}

// ConnError marks a failure to reach the holder (as opposed to an error
// the holder answered): the caller may hold the index itself instead.
type ConnError struct{ Err error }

func (e ConnError) Error() string { return "reach index holder: " + e.Err.Error() }
func (e ConnError) Unwrap() error { return e.Err }

// IsConnError reports whether err is (or wraps) a [ConnError].
func IsConnError(err error) bool {
	var ce ConnError
	return errors.As(err, &ce)
}

// Query is one search.
type Query struct {
	// Text is the query: plain words (every word must occur; if no
	// document holds them all, documents holding some are ranked), "exact
	// phrase" (must match), title:word or title:"a phrase" (must match the
	// title or an alias), -word or -"phrase" (must not match), and the
	// filters tag:T, path:P, agent:A, type:T and prop:KEY:VALUE
	// (prop:author:"Ada Lovelace": the frontmatter property KEY holds
	// every word of VALUE; prop:KEY alone: the note has the property)
	// written inline.
	Text string `json:"text"`
	// Limit is the most hits returned; default 10, at most 10,000.
	Limit int `json:"limit,omitempty"`
	// MinScore drops hits scoring below it. For plain words scores
	// compare within a match kind (see Hit.Match), so it drops the weak
	// hits of each kind.
	MinScore float64 `json:"min_score,omitempty"`
	// Filters. Agent, Type and Tag compare case-insensitively; PathPrefix
	// is a vault-relative path prefix ("projects/"); Since and Until bound
	// the document's date (frontmatter updated/date/created, the log
	// entry's time, else the file's mtime), both inclusive.
	Agent      string    `json:"agent,omitempty"`
	Type       string    `json:"type,omitempty"`
	Tag        string    `json:"tag,omitempty"`
	PathPrefix string    `json:"path_prefix,omitempty"`
	Since      time.Time `json:"since,omitzero"`
	Until      time.Time `json:"until,omitzero"`
	// NoSnippets skips reading the files for snippets (faster).
	NoSnippets bool `json:"no_snippets,omitempty"`
	// Snippets, when above 0, gives snippets to the first Snippets hits
	// only: a caller that ranks more hits than it shows (a fused search)
	// pays for the snippets it shows. The others have an empty Snippet.
	Snippets int `json:"snippets,omitempty"`
}

// Hit is one search result: a note, a section of one, a log entry or a
// decision.
type Hit struct {
	Path    string    `json:"path"`
	Line    int       `json:"line"`     // 1-based line where the section starts
	EndLine int       `json:"end_line"` // last line of the section
	Title   string    `json:"title"`
	Heading string    `json:"heading,omitempty"`
	Score   float64   `json:"score"` // compares hits of the same Match
	Match   string    `json:"match,omitempty"`
	Snippet string    `json:"snippet"` // matched words wrapped in ** **
	Kind    string    `json:"kind"`    // note, log or decision
	Agent   string    `json:"agent,omitempty"`
	Type    string    `json:"type,omitempty"`
	Date    time.Time `json:"date,omitzero"`
	// Via names the rankings that found the hit when a search fused
	// several (package hybrid): "words" (the query's words), "also" (the
	// words of an alternative phrasing), "meaning" (the embedding model).
	// Empty for a search by the query's words alone.
	Via []string `json:"via,omitempty"`
}

// Hit.Kind: what a hit is.
const (
	KindNote     = "note"
	KindLog      = "log"      // one live-log entry (log/live/YYYY-MM/WRITER.md, log/live/YYYY-MM.md)
	KindDecision = "decision" // one decision (log/decisions/WRITER.md, log/decisions.md)
)

// Hit.Match: the strongest way a hit matched a query of plain words.
// Hits are ordered by it (title-phrase first), then by score.
const (
	MatchTitlePhrase = "title-phrase" // the words as a phrase in the title or an alias
	MatchTitleWords  = "title-words"  // every query word in the title, the file name or an alias
	MatchTogether    = "together"     // query words side by side in the text
	MatchTitle       = "title"        // a word in the title or an alias
	MatchHeading     = "heading"      // a word in a tag or a heading
	MatchWords       = "words"        // the words, elsewhere
)

// Results are the hits of a search, best first.
type Results struct {
	Query string `json:"query"`
	// Total counts the matching documents, of which Hits are the best. A
	// query of plain words counts up to 1,000 (or Limit, if higher) and
	// sets TotalCapped when there are more.
	Total       uint64 `json:"total"`
	TotalCapped bool   `json:"total_capped,omitempty"`
	Hits        []Hit  `json:"hits"`
	// CatchingUp is set while the index holder's first sync after it
	// started runs (it answers from the index as it is rather than wait
	// minutes on a big new vault): hits may miss files changed while no
	// holder ran. Search again in a moment.
	CatchingUp bool `json:"catching_up,omitempty"`
	// Notice says, in one line, why search by meaning did not take part
	// (no model configured, the endpoint down or slow...): the hits are
	// then the words' alone. Set by package hybrid, never by a holder.
	Notice string `json:"notice,omitempty"`
}

// RecallPaths are the hits as a recall record holds them (agents.RecordHits,
// docs/curation.md): a path per hit, a log hit as its entry (a read covering
// the line is a read of that entry), a path once when hits follow each
// other in one file.
func (r *Results) RecallPaths() []string {
	paths := make([]string, 0, len(r.Hits))
	for _, h := range r.Hits {
		p := h.Path
		if h.Kind == KindLog && h.Line > 0 {
			p = agents.LogHit(h.Path, h.Line)
		}
		if len(paths) == 0 || paths[len(paths)-1] != p {
			paths = append(paths, p)
		}
	}
	return paths
}

// Progress reports how far a rebuild is.
type Progress struct {
	Done  int `json:"done"`
	Total int `json:"total"`
	// Merging says a rebuild has analysed every file and is merging the
	// segments it wrote into one: the last part, about a tenth of a
	// rebuild, of which nothing more can be counted. The report after it
	// (Done == Total, Merging false) means the index is complete.
	Merging bool `json:"merging,omitempty"`
}
