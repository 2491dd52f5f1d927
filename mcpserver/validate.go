package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/nexus-memory/nexus/vault"
)

// The server checks every call's arguments against the tool's declared
// inputSchema itself (mcp-go's validator is off). The verdict is
// google/jsonschema-go's, the validator of the official Go SDK; the
// words are ours: a refused call gets one message — what was wrong, what
// the tool takes, how to call again — instead of "validating root:
// validating /properties/summary: maxLength: ...". Before the verdict,
// integers and numbers sent as numeric strings, booleans sent as
// "true"/"false", one string where a list of strings is declared and
// enum values in another case are converted, as SPEC §6 asks; an
// argument sent as null counts as absent.
//
// Input schemas are plain at the top level (no oneOf, anyOf or allOf;
// SPEC §6), so which arguments go together is a tool's own [argRules].

// argError is a bad call: the problem and the tool's usage line.
type argError struct {
	tool, problem, usage string
}

func (e *argError) Error() string {
	return fmt.Sprintf("%s: %s. %s takes %s", e.tool, e.problem, e.tool, e.usage)
}

func (e *argError) Unwrap() error { return vault.ErrInvalid }

// inputSpec is one tool's input: its schema as built (ordered, for the
// wording), as sent in tools/list, and compiled by the library on first
// use, so a process that never serves a call never compiles one.
type inputSpec struct {
	schema map[string]any
	raw    []byte
	rules  argRules

	once     sync.Once
	resolved *jsonschema.Resolved
	usage    string
	err      error
}

// compiled returns the library's compiled schema.
func (in *inputSpec) compiled() (*jsonschema.Resolved, error) {
	in.once.Do(func() {
		var s jsonschema.Schema
		if err := json.Unmarshal(in.raw, &s); err != nil {
			in.err = fmt.Errorf("parse input schema: %w", err)
			return
		}
		in.resolved, in.err = s.Resolve(nil)
		in.usage = usage(in.schema)
	})
	return in.resolved, in.err
}

// agentArgs are argument names a model uses to write as someone else.
var agentArgs = map[string]bool{"agent": true, "agent_name": true, "agentName": true, "agent_id": true, "as": true, "as_agent": true, "writer": true, "author": true, "on_behalf_of": true, "impersonate": true}

// checkArgs validates args (already a JSON object) against the tool's
// input and converts numeric and boolean strings in place. agent is the
// caller, named in the refusal of an argument that names another agent.
func checkArgs(tool string, in *inputSpec, args map[string]any, agent string) error {
	rs, err := in.compiled()
	if err != nil {
		return fmt.Errorf("%s: %w (a bug in the server; report it)", tool, err)
	}
	coerce(in.schema, args)
	if verr := rs.Validate(args); verr != nil {
		p := explain(agent, "", in.schema, args)
		if p == "" {
			// The library refused what explain does not know: say what
			// it said, last clause only (the rest is schema paths).
			msg := verr.Error()
			p = "the arguments do not fit the input schema (" + msg[strings.LastIndex(msg, ": ")+2:] + ")"
		}
		return &argError{tool: tool, problem: p, usage: in.usage}
	}
	if in.rules != nil {
		if p := in.rules(args); p != "" {
			return &argError{tool: tool, problem: p, usage: in.usage}
		}
	}
	return nil
}

// coerce converts, in place, the values of obj that stand for what its
// schema s declares: a numeric string or any Go number where a number
// is declared (to float64, as encoding/json decodes), "true"/"false"
// where a boolean is, one string where a list of strings is, an enum
// value in another case or with spaces around. A declared argument sent
// as null is dropped. Anything else is left for the validator to refuse.
func coerce(s map[string]any, obj map[string]any) {
	props, _ := s["properties"].(fields)
	for _, f := range props {
		x, ok := obj[f.name]
		if !ok {
			continue
		}
		if x == nil {
			delete(obj, f.name)
			continue
		}
		obj[f.name] = coerceValue(f.p, x)
	}
}

func coerceValue(p prop, x any) any {
	switch p["type"] {
	case "integer", "number":
		switch n := x.(type) {
		case string:
			if f, err := strconv.ParseFloat(strings.TrimSpace(n), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return f
			}
		case json.Number:
			if f, err := n.Float64(); err == nil {
				return f
			}
		case int:
			return float64(n)
		case int64:
			return float64(n)
		}
	case "boolean":
		if b, ok := x.(string); ok {
			if t, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
				return t
			}
		}
	case "string":
		if str, ok := x.(string); ok {
			folded := strings.ToLower(strings.TrimSpace(str))
			for _, e := range strList(p["enum"]) {
				if folded == e {
					return e
				}
			}
		}
	case "array":
		items := asProp(p["items"])
		if str, ok := x.(string); ok && items != nil && items["type"] == "string" {
			return []any{str}
		}
		if list, ok := x.([]any); ok && items != nil {
			for i, e := range list {
				if e != nil {
					list[i] = coerceValue(items, e)
				}
			}
		}
	case "object":
		if obj, ok := x.(map[string]any); ok {
			coerce(p, obj)
		}
	}
	return x
}

// explain names, in our words, the first thing in obj its schema s
// refuses, or returns "" when it finds none. It reads the schema as
// built: the order of the properties is the order of the problems.
func explain(agent, at string, s map[string]any, obj map[string]any) string {
	props, _ := s["properties"].(fields)
	if s["additionalProperties"] == false {
		var unknown []string
		for k := range obj {
			if props.get(k) == nil {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		for _, k := range unknown {
			if agentArgs[k] && at == "" {
				who := ""
				if name, ok := obj[k].(string); ok && name != "" && name != agent {
					who = fmt.Sprintf(" (it names %q)", truncate(name, 40))
				}
				return fmt.Sprintf("argument %q is refused%s: the agent is taken from the connection, never from arguments — you are %s, and this call acts as %s only. Drop %q and call again", k, who, agent, agent, k)
			}
		}
		if len(unknown) > 0 {
			return fmt.Sprintf("unknown argument %q%s; drop it (names are case-sensitive) and call again", at+unknown[0], suggest(unknown[0], props))
		}
	}
	for _, r := range strList(s["required"]) {
		if _, ok := obj[r]; !ok {
			return fmt.Sprintf("missing required argument %q", at+r)
		}
	}
	for _, f := range props {
		if x, ok := obj[f.name]; ok {
			if p := explainValue(agent, at+f.name, f.p, x); p != "" {
				return p
			}
		}
	}
	return ""
}

// explainValue names what is wrong with one value, or returns "".
func explainValue(agent, at string, p prop, x any) string {
	typ, _ := p["type"].(string)
	switch typ {
	case "string":
		s, ok := x.(string)
		if !ok {
			return fmt.Sprintf("argument %q must be a string, got %s", at, describeValue(x))
		}
		n := utf8.RuneCountInString(s)
		if m, ok := intOf(p["minLength"]); ok && n < m {
			if m == 1 {
				return fmt.Sprintf("argument %q is empty", at)
			}
			return fmt.Sprintf("argument %q is %d characters, fewer than the %d needed", at, n, m)
		}
		if m, ok := intOf(p["maxLength"]); ok && n > m {
			return fmt.Sprintf("argument %q is %d characters, more than the %d allowed; shorten it", at, n, m)
		}
		if enum := strList(p["enum"]); len(enum) > 0 && !contains(enum, s) {
			return fmt.Sprintf("argument %q is %q; use one of %s", at, truncate(s, 40), strings.Join(quoteAll(enum), ", "))
		}
	case "integer", "number":
		f, ok := x.(float64)
		if !ok {
			if s, isStr := x.(string); isStr {
				return fmt.Sprintf("argument %q must be %s, got the string %q", at, aNumber(typ), truncate(s, 40))
			}
			return fmt.Sprintf("argument %q must be %s, got %s", at, aNumber(typ), describeValue(x))
		}
		if typ == "integer" && f != math.Trunc(f) {
			return fmt.Sprintf("argument %q must be a whole number, got %s", at, fmtNum(f))
		}
		lo, hasLo := numOf(p["minimum"])
		hi, hasHi := numOf(p["maximum"])
		switch {
		case (hasLo && f < lo || hasHi && f > hi) && hasLo && hasHi:
			return fmt.Sprintf("argument %q must be from %s to %s, got %s", at, fmtNum(lo), fmtNum(hi), fmtNum(f))
		case hasLo && f < lo:
			return fmt.Sprintf("argument %q must be at least %s, got %s", at, fmtNum(lo), fmtNum(f))
		case hasHi && f > hi:
			return fmt.Sprintf("argument %q must be at most %s, got %s", at, fmtNum(hi), fmtNum(f))
		}
	case "boolean":
		if _, ok := x.(bool); !ok {
			return fmt.Sprintf("argument %q must be true or false, got %s", at, describeValue(x))
		}
	case "array":
		list, ok := x.([]any)
		if !ok {
			return fmt.Sprintf("argument %q must be a list, got %s", at, describeValue(x))
		}
		if m, ok := intOf(p["minItems"]); ok && len(list) < m {
			return fmt.Sprintf("argument %q has %d items, fewer than the %d needed", at, len(list), m)
		}
		if m, ok := intOf(p["maxItems"]); ok && len(list) > m {
			return fmt.Sprintf("argument %q has %d items, more than the %d allowed; split it over several calls", at, len(list), m)
		}
		if items := asProp(p["items"]); items != nil {
			for i, e := range list {
				if prob := explainValue(agent, fmt.Sprintf("%s[%d]", at, i), items, e); prob != "" {
					return prob
				}
			}
		}
	case "object":
		obj, ok := x.(map[string]any)
		if !ok {
			return fmt.Sprintf("argument %q must be an object, got %s", at, describeValue(x))
		}
		return explain(agent, at+".", map[string]any(p), obj)
	}
	return ""
}

func aNumber(typ string) string {
	if typ == "integer" {
		return "a whole number"
	}
	return "a number"
}

// fmtNum writes a number as a person does: 1073741824, not
// 1.073741824e+09; 2.5 as 2.5.
func fmtNum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// describeValue names a JSON value's type, with a short sample.
func describeValue(x any) string {
	switch t := x.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(t, 40))
	case float64:
		return "the number " + fmtNum(t)
	case bool:
		return fmt.Sprintf("%v", t)
	}
	return jsonType(x)
}

// usage is a one-line summary of a tool's arguments: "summary
// [required], body, channel, kind, key" or "last (integer 1–100), ...".
func usage(s map[string]any) string {
	props, _ := s["properties"].(fields)
	if len(props) == 0 {
		return "no arguments; call it with {}"
	}
	req := map[string]bool{}
	for _, r := range strList(s["required"]) {
		req[r] = true
	}
	var parts []string
	for _, f := range props {
		part := f.name
		if enum := strList(f.p["enum"]); len(enum) > 0 {
			part += " (" + strings.Join(enum, "|") + ")"
		} else if t, ok := f.p["type"].(string); ok && t != "string" {
			part += " (" + t
			lo, hasLo := numOf(f.p["minimum"])
			hi, hasHi := numOf(f.p["maximum"])
			if hasLo && hasHi {
				part += " " + fmtNum(lo) + "–" + fmtNum(hi)
			}
			part += ")"
		}
		if req[f.name] {
			part += " [required]"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// suggest proposes the declared property closest to a mistyped name.
func suggest(name string, props fields) string {
	low := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	for _, f := range props {
		n := strings.ToLower(f.name)
		if n == low || strings.ReplaceAll(n, "_", "") == strings.ReplaceAll(low, "_", "") {
			return fmt.Sprintf(" (did you mean %q?)", f.name)
		}
	}
	return ""
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, e := range ss {
		if e == s {
			return true
		}
	}
	return false
}

// asProp returns a schema given as a prop or as an object schema.
func asProp(x any) prop {
	switch t := x.(type) {
	case prop:
		return t
	case map[string]any:
		return prop(t)
	}
	return nil
}

func (fs fields) get(name string) prop {
	for _, f := range fs {
		if f.name == name {
			return f.p
		}
	}
	return nil
}

func strList(x any) []string {
	switch t := x.(type) {
	case []string:
		return t
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func intOf(x any) (int, bool) {
	switch n := x.(type) {
	case int:
		return n, true
	case float64:
		return int(n), true
	}
	return 0, false
}

func numOf(x any) (float64, bool) {
	switch n := x.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
