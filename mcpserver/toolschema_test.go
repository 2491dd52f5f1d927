package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-memory/nexus/vault"
)

// listInputSchemas returns every tool's inputSchema as tools/list sends
// it, decoded as a client decodes it.
func listInputSchemas(t *testing.T, cs *sdk.ClientSession) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s map[string]any
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: inputSchema does not decode: %v", tool.Name, err)
		}
		out[tool.Name] = s
	}
	return out
}

// TestInputSchemasSuitAnthropic checks every tool's inputSchema against
// the rules of Anthropic's Messages API for a tool's input_schema, which
// Claude Code (and Bedrock, Vertex) send MCP tools through: a JSON Schema
// of type "object", with no oneOf, allOf or anyOf at its top level — the
// API answers 400 "tools.N.custom.input_schema: input_schema does not
// support oneOf, allOf, or anyOf at the top level" for the whole request,
// so one such tool breaks every turn (anthropics/claude-code#5319,
// #27337; the rule is known from that error, not from the tool-use
// docs, as marianfoo/mcp-sap-docs#51 notes). not and if/then/else are
// refused here too: they are the same kind of combination, and SPEC §6
// wants the top level plain. Beyond Anthropic's rules, SPEC §6's: no
// unknown properties, required names that exist, and every value bounded.
func TestInputSchemasSuitAnthropic(t *testing.T) {
	v := mustVault(t, "lyra")
	_, url, tokens := startServer(t, v, "lyra")
	schemas := listInputSchemas(t, connectHTTP(t, url, tokens["lyra"], "", nil))
	if len(schemas) != len(specTools) {
		t.Errorf("%d tools listed, want the %d of SPEC §6", len(schemas), len(specTools))
	}
	for name, s := range schemas {
		if s["type"] != "object" {
			t.Errorf("%s: inputSchema type is %v, want object", name, s["type"])
		}
		for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "if", "then", "else", "$ref", "dependentRequired", "dependentSchemas"} {
			if _, ok := s[k]; ok {
				t.Errorf("%s: inputSchema has %q at the top level", name, k)
			}
		}
		props, ok := s["properties"].(map[string]any)
		if !ok {
			t.Errorf("%s: inputSchema has no properties object", name)
			continue
		}
		if s["additionalProperties"] != false {
			t.Errorf("%s: inputSchema allows unknown properties", name)
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := props[r.(string)]; !ok {
				t.Errorf("%s: required %q is not a property", name, r)
			}
		}
		for p, ps := range props {
			checkBounded(t, name+"."+p, ps.(map[string]any))
		}
	}
}

// checkBounded wants every value of a property bounded: strings by
// maxLength, integers by minimum and maximum, lists by maxItems, and the
// bounds whole numbers.
func checkBounded(t *testing.T, at string, p map[string]any) {
	t.Helper()
	for _, k := range []string{"oneOf", "anyOf", "allOf", "not", "if"} {
		if _, ok := p[k]; ok {
			t.Errorf("%s: %s in a property (state the rule in the description and the server's checks)", at, k)
		}
	}
	whole := func(k string) {
		if f, ok := p[k].(float64); ok && f != float64(int64(f)) {
			t.Errorf("%s: %s is %v, not a whole number", at, k, f)
		}
	}
	for _, k := range []string{"minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"} {
		whole(k)
	}
	switch p["type"] {
	case "string":
		if _, ok := p["maxLength"]; !ok && p["enum"] == nil {
			t.Errorf("%s: string without maxLength", at)
		}
	case "integer":
		if p["minimum"] == nil || p["maximum"] == nil {
			t.Errorf("%s: integer without minimum and maximum", at)
		}
	case "number", "boolean":
	case "array":
		if p["maxItems"] == nil {
			t.Errorf("%s: list without maxItems", at)
		}
		items, ok := p["items"].(map[string]any)
		if !ok {
			t.Errorf("%s: list without items", at)
			return
		}
		checkBounded(t, at+"[]", items)
	case "object":
		if p["additionalProperties"] != false {
			t.Errorf("%s: object allows unknown properties", at)
		}
		props, _ := p["properties"].(map[string]any)
		for k, ps := range props {
			checkBounded(t, at+"."+k, ps.(map[string]any))
		}
	default:
		t.Errorf("%s: no type (%v)", at, p["type"])
	}
}

// boundCase is one declared bound of one argument: the path to it (names,
// and 0 for a list's first item), the keyword and its value.
type boundCase struct {
	path    []any
	keyword string
	bound   int
}

func (c boundCase) String() string {
	var b strings.Builder
	for _, s := range c.path {
		switch s := s.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s)
		case int:
			fmt.Fprintf(&b, "[%d]", s)
		}
	}
	return fmt.Sprintf("%s %s %d", b.String(), c.keyword, c.bound)
}

// name is the argument as a refusal names it: operations[0].content.
func (c boundCase) name() string {
	s := c.String()
	return s[:strings.IndexByte(s, ' ')]
}

// boundsOf lists every bound a schema declares, properties in name order.
func boundsOf(path []any, p map[string]any) []boundCase {
	var out []boundCase
	for _, k := range []string{"minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"} {
		if f, ok := p[k].(float64); ok && !(k == "minLength" && f == 0) {
			out = append(out, boundCase{path: path, keyword: k, bound: int(f)})
		}
	}
	if items, ok := p["items"].(map[string]any); ok {
		out = append(out, boundsOf(append(path[:len(path):len(path)], 0), items)...)
	}
	props, _ := p["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out = append(out, boundsOf(append(path[:len(path):len(path)], k), props[k].(map[string]any))...)
	}
	return out
}

// TestDeclaredBoundsAreEnforced calls every tool with every argument at
// each bound its schema declares and one past it: past the bound the call
// is refused in our words, naming the argument and the bound; at the bound
// nothing refuses it for its size — not the schema, not a tighter limit
// further in (the bug this guards against: "summary" declared 1 MiB while
// the log takes 500 characters). Each tool starts from arguments that
// succeed (or, where they cannot, are refused for another reason).
func TestDeclaredBoundsAreEnforced(t *testing.T) {
	v := mustVault(t, "lyra")
	// Room for entries as long as the memory tool's 65,536-character
	// bound, so a call at the bound can succeed.
	if err := v.UpdateConfig(func(c *vault.Config) error { c.MemoryCharLimit = 400_000; return nil }); err != nil {
		t.Fatal(err)
	}
	_, url, tokens := startServer(t, v, "lyra")
	cs := connectHTTP(t, url, tokens["lyra"], "", nil)
	schemas := listInputSchemas(t, cs)
	op := func() map[string]any { return map[string]any{"action": "add", "content": "op entry"} }
	fact := func() map[string]any {
		return map[string]any{"name": "bound fact", "description": "d", "type": "project", "body": "b", "source": "s"}
	}
	base := map[string]struct {
		args map[string]any
		ok   bool // the base call succeeds
	}{
		"memory":          {map[string]any{"action": "add", "content": "base entry", "old_text": "x", "operations": []any{op()}}, false},
		"fact_write":      {map[string]any{"name": "bound fact", "description": "d", "type": "project", "body": "b", "source": "s", "update": true}, true},
		"fact_read":       {map[string]any{"agent": "lyra"}, true},
		"fact_remove":     {map[string]any{"slug": "no-such-fact"}, false},
		"memory_search":   {map[string]any{"query": "bound", "maxResults": 5, "limit": 5, "agent": "lyra", "type": "project", "tag": "t", "path": "agents/", "since": "2020-01-01", "until": "2100-01-01", "also": []any{"other words"}}, true},
		"memory_get":      {map[string]any{"path": "agents/lyra/IDENTITY.md", "from": 1, "lines": 5}, true},
		"memory_links":    {map[string]any{"note": "agents/lyra/IDENTITY.md", "limit": 5}, true},
		"log_read":        {map[string]any{"last": 5, "channel": "general", "kind": "note", "from": "lyra"}, true},
		"log_append":      {map[string]any{"summary": "bound", "body": "b", "channel": "c", "kind": "k", "key": "k1"}, true},
		"decision_record": {map[string]any{"title": "t", "decision": "d", "rationale": "r"}, true},
		"decision_list":   {map[string]any{}, true},
		"checkpoint_save": {map[string]any{"task": "t", "state": "s", "next": "n", "notes": "o", "files": []any{"a.go"}}, true},
		"checkpoint_load": {map[string]any{}, true},
		"retain":          {fact(), true},
	}
	// Alternatives that cannot be sent together: each bound is tried on
	// its own form of the call.
	forms := map[string]map[string][]string{
		"memory": {"operations": {"action", "content", "old_text"}, "old_text": {"operations"}, "content": {"operations", "old_text"}, "action": {"operations", "old_text"}},
		"retain": {"facts": {"name", "description", "type", "body", "source"}},
	}
	baseFor := map[string]func(map[string]any){
		// Bounds on a retain batch: start from a batch of one fact.
		"retain.facts": func(a map[string]any) { a["facts"] = []any{fact()} },
		// old_text alone makes a remove.
		"memory.old_text": func(a map[string]any) { a["action"] = "remove" },
	}
	call := func(name string, args map[string]any) (bool, string) {
		t.Helper()
		res := callTool(t, cs, name, args)
		if m, ok := res.StructuredContent.(map[string]any); ok && res.IsError {
			if e, ok := m["error"].(string); ok {
				return true, e
			}
		}
		return res.IsError, strings.Join(texts(res), "\n")
	}
	for name, s := range schemas {
		b, ok := base[name]
		if !ok {
			t.Errorf("no base arguments for tool %s", name)
			continue
		}
		if b.ok {
			if failed, msg := call(name, clone(b.args)); failed {
				t.Errorf("%s(%v): base call refused: %s", name, b.args, msg)
			}
		}
		for _, c := range boundsOf(nil, s) {
			t.Run(name+" "+c.String(), func(t *testing.T) {
				top := c.path[0].(string)
				args := clone(b.args)
				for _, drop := range forms[name][top] {
					delete(args, drop)
				}
				if f := baseFor[name+"."+top]; f != nil {
					f(args)
				}
				at, past := boundValues(t, c, args)
				if failed, msg := call(name, set(args, c.path, at)); failed {
					if sizeRefusal(msg) {
						t.Errorf("%s at its bound (%s) refused for its size: %s", c.name(), c, msg)
					} else {
						t.Logf("at its bound, refused for another reason (no such fact, not a date, ...): %.200s", msg)
					}
				}
				failed, msg := call(name, set(args, c.path, past))
				if !failed {
					t.Fatalf("%s past its bound (%s) accepted", c.name(), c)
				}
				if !strings.Contains(msg, strconv.Quote(c.name())) || !strings.Contains(msg, name+" takes ") {
					t.Errorf("%s past its bound (%s): refusal does not name the argument in our words: %s", c.name(), c, msg)
				}
				if strings.HasPrefix(c.keyword, "max") && !strings.Contains(msg, strconv.Itoa(c.bound)) {
					t.Errorf("%s past its bound (%s): refusal does not give the bound as %d: %s", c.name(), c, c.bound, msg)
				}
			})
		}
	}
}

// sizeRefusal reports whether a refusal is about a value's size.
func sizeRefusal(msg string) bool {
	for _, w := range []string{"more than", "fewer than", "at most", "at least", "too long", "too large", "must be from", "is empty"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// boundValues returns the value of c's argument at its bound and one past
// it, shaped from the argument's current value in args.
func boundValues(t *testing.T, c boundCase, args map[string]any) (at, past any) {
	t.Helper()
	n, beyond := c.bound, c.bound+1
	if strings.HasPrefix(c.keyword, "min") {
		beyond = c.bound - 1
	}
	switch c.keyword {
	case "minimum", "maximum":
		return n, beyond
	case "minLength", "maxLength":
		return strings.Repeat("x", n), strings.Repeat("x", beyond)
	}
	cur, _ := get(args, c.path).([]any)
	if len(cur) == 0 {
		t.Fatalf("%s: no list item in the base arguments to repeat", c)
	}
	list := func(k int) []any {
		out := make([]any, k)
		for i := range out {
			out[i] = distinct(cur[0], i)
		}
		return out
	}
	return list(n), list(beyond)
}

// distinct makes the i-th copy of a list item, its free text numbered so
// no two items are the same entry or fact.
func distinct(x any, i int) any {
	switch x := x.(type) {
	case string:
		return fmt.Sprintf("%s-%d", x, i)
	case map[string]any:
		out := clone(x)
		for _, k := range []string{"content", "name"} {
			if s, ok := out[k].(string); ok {
				out[k] = fmt.Sprintf("%s %d", s, i)
			}
		}
		return out
	}
	return x
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	json.Unmarshal(b, &out)
	return out
}

func get(x any, path []any) any {
	for _, s := range path {
		switch s := s.(type) {
		case string:
			m, _ := x.(map[string]any)
			x = m[s]
		case int:
			l, _ := x.([]any)
			if s >= len(l) {
				return nil
			}
			x = l[s]
		}
	}
	return x
}

// set returns a copy of args with the value at path replaced.
func set(args map[string]any, path []any, v any) map[string]any {
	out := clone(args)
	parent := get(out, path[:len(path)-1])
	switch s := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[s] = v
	case int:
		parent.([]any)[s] = v
	}
	return out
}
