package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-memory/nexus/vault"
)

// maxStringArg bounds any one string argument. Real arguments (a memory
// entry, a fact, a checkpoint) are far smaller; anything bigger is refused
// before it reaches the domain packages.
const maxStringArg = 1 << 20

// runFunc is one tool's body: it gets the transport's agent and the
// arguments, and returns a JSON-able result shaped like the CLI's --json
// output. A non-nil result returned with an error is still shown to the
// agent (for example current_entries when memory is full).
type runFunc func(ctx context.Context, c *call) (any, error)

// tool is a tool's definition and body.
type tool struct {
	def mcp.Tool
	run runFunc
}

// call is one tool invocation.
type call struct {
	agent string
	args  map[string]any
	err   error // first argument error
}

// handler wraps run into an mcp-go handler: it binds the agent, refuses
// calls during shutdown, recovers panics into tool errors, renders the
// result and appends the unread-log notice.
func (s *Server) handler(name string, run runFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		agent, ok := agentFrom(ctx)
		if !ok {
			return errorResult(nil, ErrNoAgent), nil
		}
		if !s.enter() {
			return errorResult(nil, ErrShuttingDown), nil
		}
		defer s.leave()
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("tool panicked", "tool", name, "agent", agent, "panic", r, "stack", string(debug.Stack()))
				res, err = errorResult(nil, fmt.Errorf("internal error in %s: %v (the server is still running; nothing was written if the error came before the write — check with a read tool, then retry)", name, r)), nil
			}
		}()
		c := &call{agent: agent}
		c.args, c.err = argumentsOf(req)
		if c.err == nil {
			if in, ok := inputSpecs.Load(name); ok {
				c.err = checkArgs(name, in.(*inputSpec), c.args, agent)
			}
		}
		var out any
		var rerr error
		if c.err != nil {
			rerr = c.err
		} else {
			// The client may go away mid-call; a write that has begun
			// still finishes, so the vault never sees half an operation.
			out, rerr = run(context.WithoutCancel(ctx), c)
			if rerr == nil && c.err != nil {
				rerr = c.err
			}
		}
		got, notice := s.unreadNotice(agent)
		var withN func(any) any
		if notice != "" {
			withN = func(sc any) any {
				return withNotice(sc, unreadNoticeOut{Count: got.total, From: got.by, Text: notice})
			}
		}
		if rerr != nil {
			s.log.Info("tool refused", "tool", name, "agent", agent, "err", rerr, "took", time.Since(start))
			res = errorResult(out, rerr)
			if withN != nil {
				res.StructuredContent = withN(res.StructuredContent)
			}
		} else {
			s.log.Debug("tool call", "tool", name, "agent", agent, "took", time.Since(start))
			// The notice goes into the structured value before its text
			// copy is made, so a big result is indented once.
			res = jsonResultWith(out, withN)
		}
		if notice != "" {
			res.Content = append(res.Content, mcp.NewTextContent(notice))
		}
		return res, nil
	}
}

// withNotice adds the structured unread notice to a result's structured
// content (a JSON object).
func withNotice(sc any, n unreadNoticeOut) any {
	raw, ok := sc.(json.RawMessage)
	if !ok || len(raw) < 2 || raw[0] != '{' {
		return sc
	}
	nb := marshal(n)
	out := make([]byte, 0, len(raw)+len(nb)+20)
	out = append(out, raw[:len(raw)-1]...)
	if len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"unread_notice":`...)
	out = append(out, nb...)
	out = append(out, '}')
	return json.RawMessage(out)
}

// maxArgsBytes bounds a call's arguments as sent.
const maxArgsBytes = 2 << 20

func argumentsOf(req mcp.CallToolRequest) (map[string]any, error) {
	if raw := req.Params.RawArguments; raw != nil {
		if len(raw) > maxArgsBytes {
			return nil, fmt.Errorf("arguments are %d bytes, more than the %d allowed; send less text per call: %w", len(raw), maxArgsBytes, vault.ErrInvalid)
		}
		if !utf8.Valid(raw) {
			return nil, fmt.Errorf("arguments contain invalid UTF-8; send text as UTF-8: %w", vault.ErrInvalid)
		}
	}
	switch a := req.Params.Arguments.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return a, nil
	default:
		return nil, fmt.Errorf("arguments must be a JSON object of named parameters: %w", vault.ErrInvalid)
	}
}

// jsonResult renders a successful result as JSON text, and as structured
// content when it is a JSON object. The text copy of structured content is
// indented as JavaScript's JSON.stringify(value, null, 2) writes it:
// OpenClaw's MCP bridge shows the structured value and drops a text block
// equal to that form, so the model gets the result once, not twice.
func jsonResult(v any) *mcp.CallToolResult { return jsonResultWith(v, nil) }

// jsonResultWith is [jsonResult] with the structured content passed
// through add (nil: as it is) before its text copy is made.
func jsonResultWith(v any, add func(any) any) *mcp.CallToolResult {
	b := marshal(v)
	if len(b) > 0 && b[0] == '{' {
		var sc any = json.RawMessage(b)
		if add != nil {
			sc = add(sc)
		}
		raw, _ := sc.(json.RawMessage)
		res := mcp.NewToolResultText(string(indentLikeJS(raw)))
		res.StructuredContent = sc
		return res
	}
	return mcp.NewToolResultText(string(b))
}

// indentLikeJS indents compact JSON by two spaces and writes U+2028 and
// U+2029 as themselves (Go's encoder escapes them; JavaScript does not).
func indentLikeJS(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b) + len(b)/4) // the indentation's share, about
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return b
	}
	in := buf.Bytes()
	if !bytes.Contains(in, []byte(`\u202`)) {
		return in
	}
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' || i+1 >= len(in) {
			out = append(out, in[i])
			continue
		}
		if i+5 < len(in) && in[i+1] == 'u' && (string(in[i+2:i+6]) == "2028" || string(in[i+2:i+6]) == "2029") {
			out = append(out, string(rune(0x2028+int(in[i+5]-'8')))...)
			i += 5
			continue
		}
		out = append(out, in[i], in[i+1]) // an escape pair: \\, \", \n, ...
		i++
	}
	return out
}

// errorResult renders a tool error: the result's JSON when there is one
// (it carries the details an agent needs to recover), else
// {"success":false,"error":...}.
func errorResult(v any, err error) *mcp.CallToolResult {
	msg := describe(err)
	var b []byte
	if !isZero(v) {
		b = marshal(v)
		// Make sure the message is in the result the agent sees.
		if !bytes.Contains(b, []byte(`"error"`)) && len(b) > 1 && b[0] == '{' {
			var m map[string]any
			if json.Unmarshal(b, &m) == nil {
				m["error"] = msg
				b = marshal(m)
			}
		}
	} else {
		b = marshal(struct {
			Success bool   `json:"success"`
			Error   string `json:"error"`
		}{false, msg})
	}
	res := mcp.NewToolResultError(string(b))
	if len(b) > 0 && b[0] == '{' {
		res.StructuredContent = json.RawMessage(b)
	}
	return res
}

// isZero reports whether v is nil, a nil pointer or a zero value: a
// result not worth showing next to an error.
func isZero(v any) bool {
	return v == nil || reflect.ValueOf(v).IsZero()
}

func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(strconv.Quote("cannot encode result: " + err.Error()))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// describe turns a domain error into a message an agent can act on.
func describe(err error) string {
	msg := err.Error()
	switch {
	case errors.Is(err, vault.ErrUnsafePath):
		return msg + ". Paths are vault-relative, like agents/lyra/MEMORY.md or projects/plan.md; .nexus/, other dot-folders and anything outside the vault cannot be read."
	case errors.Is(err, vault.ErrConflict):
		return msg + ". Someone changed the file at the same moment; call the tool again."
	case errors.Is(err, vault.ErrNotFound):
		return msg + ". Check the name or path (memory_search finds notes) and call again."
	case errors.Is(err, vault.ErrInvalid):
		return msg + ". Fix the arguments and call again."
	}
	// Refusals (limits, scan hits, no match) carry their own advice.
	return msg
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// fail records the first argument problem of c (later ones are dropped:
// the agent fixes one thing at a time).
func (c *call) fail(format string, a ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format+": %w", append(a, vault.ErrInvalid)...)
	}
}

// str returns string argument name ("" when absent). required makes
// absence (or an empty string) an error.
func (c *call) str(name string, required bool) string {
	v, ok := c.args[name]
	if !ok || v == nil {
		if required {
			c.fail("missing required argument %q", name)
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		c.fail("argument %q must be a string, got %s", name, jsonType(v))
		return ""
	}
	switch {
	case len(s) > maxStringArg:
		c.fail("argument %q is %d bytes, more than the %d allowed", name, len(s), maxStringArg)
		return ""
	case !utf8.ValidString(s):
		c.fail("argument %q is not valid UTF-8 text", name)
		return ""
	case required && strings.TrimSpace(s) == "":
		c.fail("argument %q is empty", name)
		return ""
	}
	return s
}

// first returns the first of several alternative names that is present
// (for parameters known under two names, like maxResults and limit).
func (c *call) first(names ...string) string {
	for _, n := range names {
		if v, ok := c.args[n]; ok && v != nil {
			return n
		}
	}
	return names[0]
}

// integer returns integer argument name, or def when absent. Whole numbers
// sent as JSON numbers or numeric strings are accepted.
func (c *call) integer(name string, def, min, max int) int {
	v, ok := c.args[name]
	if !ok || v == nil {
		return def
	}
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			c.fail("argument %q must be an integer, got %q", name, x)
			return def
		}
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			c.fail("argument %q must be an integer, got string %q", name, truncate(x, 40))
			return def
		}
		f = float64(n)
	default:
		c.fail("argument %q must be an integer, got %s", name, jsonType(v))
		return def
	}
	if f != math.Trunc(f) || f < float64(min) || f > float64(max) {
		c.fail("argument %q must be a whole number from %d to %d, got %v", name, min, max, f)
		return def
	}
	return int(f)
}

// number returns number argument name, or def when absent.
func (c *call) number(name string, def float64) float64 {
	v, ok := c.args[name]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case float64:
		return x
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil {
			return f
		}
	}
	c.fail("argument %q must be a number, got %s", name, jsonType(v))
	return def
}

// boolean returns boolean argument name, or def when absent.
func (c *call) boolean(name string, def bool) bool {
	v, ok := c.args[name]
	if !ok || v == nil {
		return def
	}
	switch x := v.(type) {
	case bool:
		return x
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b
		}
	}
	c.fail("argument %q must be true or false, got %s", name, jsonType(v))
	return def
}

// strs returns a list-of-strings argument; a single string is taken as a
// list of one.
func (c *call) strs(name string) []string {
	v, ok := c.args[name]
	if !ok || v == nil {
		return nil
	}
	switch x := v.(type) {
	case string:
		if s := c.str(name, false); s != "" {
			return []string{s}
		}
		return nil
	case []any:
		out := make([]string, 0, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok || len(s) > maxStringArg || !utf8.ValidString(s) {
				c.fail("argument %q item %d must be a string of valid UTF-8 text", name, i)
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	c.fail("argument %q must be a list of strings, got %s", name, jsonType(v))
	return nil
}

// objects returns a list-of-objects argument.
func (c *call) objects(name string) []map[string]any {
	v, ok := c.args[name]
	if !ok || v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		c.fail("argument %q must be a list of objects, got %s", name, jsonType(v))
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			c.fail("argument %q item %d must be an object, got %s", name, i, jsonType(e))
			return nil
		}
		out = append(out, m)
	}
	return out
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
