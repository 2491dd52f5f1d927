package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/vault"
)

// The server checks every call's arguments against the tool's declared
// inputSchema itself (mcp-go's validator is off): a bad call gets one
// message in our words — what was wrong, what the tool takes, how to call
// again — instead of "input schema validation failed: <root>: &{...}".
// Only the JSON Schema keywords the schemas in this package use are
// understood: type, properties, required, additionalProperties, enum,
// const, minimum, maximum, minLength, maxLength, items, minItems,
// maxItems, oneOf, allOf, if/then and not. Integers and numbers sent as
// numeric strings, and booleans sent as "true"/"false", are accepted and
// converted, as SPEC §6 asks.

// argError is a bad call: the problem and the tool's usage line.
type argError struct {
	tool, problem, usage string
}

func (e *argError) Error() string {
	return fmt.Sprintf("%s: %s. %s takes %s", e.tool, e.problem, e.tool, e.usage)
}

func (e *argError) Unwrap() error { return vault.ErrInvalid }

// agentArgs are argument names a model uses to write as someone else.
var agentArgs = map[string]bool{"agent": true, "agent_name": true, "agentName": true, "agent_id": true, "as": true, "as_agent": true, "writer": true, "author": true, "on_behalf_of": true, "impersonate": true}

// checkArgs validates args (already a JSON object) against the tool's
// schema and converts numeric and boolean strings in place. agent is the
// caller, named in the refusal of an argument that names another agent.
func checkArgs(tool string, schema map[string]any, args map[string]any, agent string) error {
	v := &validator{tool: tool, agent: agent}
	if p := v.object("", schema, args); p != "" {
		return &argError{tool: tool, problem: p, usage: usage(schema)}
	}
	return nil
}

type validator struct {
	tool, agent string
}

// object checks an object value; it returns the first problem or "".
func (v *validator) object(at string, s map[string]any, obj map[string]any) string {
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
				if name, ok := obj[k].(string); ok && name != "" && name != v.agent {
					who = fmt.Sprintf(" (it names %q)", truncate(name, 40))
				}
				return fmt.Sprintf("argument %q is refused%s: the agent is taken from the connection, never from arguments — you are %s, and this call acts as %s only. Drop %q and call again", k, who, v.agent, v.agent, k)
			}
		}
		if len(unknown) > 0 {
			return fmt.Sprintf("unknown argument %q%s; drop it (names are case-sensitive) and call again", at+unknown[0], suggest(unknown[0], props))
		}
	}
	for _, r := range strList(s["required"]) {
		if x, ok := obj[r]; !ok || x == nil {
			return fmt.Sprintf("missing required argument %q", at+r)
		}
	}
	for _, f := range props {
		x, ok := obj[f.name]
		if !ok || x == nil {
			continue
		}
		y, p := v.value(at+f.name, f.p, x)
		if p != "" {
			return p
		}
		obj[f.name] = y
	}
	for _, sub := range anyList(s["allOf"]) {
		if p := v.conditional(at, sub, obj); p != "" {
			return p
		}
	}
	if alts := anyList(s["oneOf"]); len(alts) > 0 {
		n, present := 0, 0
		for _, alt := range alts {
			if v.matches(alt, obj) {
				n++
			}
			if v.matches(map[string]any{"required": alt["required"]}, obj) {
				present++
			}
		}
		if present > 1 {
			n = present
		}
		if n != 1 {
			var names []string
			for _, alt := range alts {
				names = append(names, strings.Join(strList(alt["required"]), "+"))
			}
			if n == 0 {
				return fmt.Sprintf("send one of %s", orList(at, names))
			}
			return fmt.Sprintf("send only one of %s, not several", orList(at, names))
		}
	}
	return ""
}

// conditional checks one allOf member: an if/then on a property's value.
func (v *validator) conditional(at string, sub map[string]any, obj map[string]any) string {
	cond, _ := sub["if"].(map[string]any)
	then, _ := sub["then"].(map[string]any)
	if cond == nil || then == nil || !v.matches(cond, obj) {
		return ""
	}
	key, val := "", ""
	if ps, ok := cond["properties"].(map[string]any); ok {
		for k, p := range ps {
			if c, ok := p.(map[string]any)["const"]; ok {
				key, val = k, fmt.Sprint(c)
			}
		}
	}
	for _, r := range strList(then["required"]) {
		if x, ok := obj[r]; !ok || x == nil {
			return fmt.Sprintf("missing argument %q, which %q needs when %s is %q", at+r, val, at+key, val)
		}
	}
	return ""
}

// matches reports whether obj satisfies the required, not and const
// parts of s (the parts used as conditions and alternatives).
func (v *validator) matches(s map[string]any, obj map[string]any) bool {
	for _, r := range strList(s["required"]) {
		if x, ok := obj[r]; !ok || x == nil {
			return false
		}
	}
	if ps, ok := s["properties"].(map[string]any); ok {
		for k, p := range ps {
			if c, ok := p.(map[string]any)["const"]; ok {
				if x, ok := obj[k].(string); !ok || strings.TrimSpace(strings.ToLower(x)) != c {
					return false
				}
			}
		}
	}
	if not, ok := s["not"].(map[string]any); ok && v.matches(not, obj) {
		return false
	}
	return true
}

// value checks one value against its property schema and returns it,
// converted where a string stood for a number or a boolean.
func (v *validator) value(at string, p prop, x any) (any, string) {
	typ, _ := p["type"].(string)
	switch typ {
	case "string":
		s, ok := x.(string)
		if !ok {
			return x, fmt.Sprintf("argument %q must be a string, got %s", at, describeValue(x))
		}
		if !utf8.ValidString(s) {
			return x, fmt.Sprintf("argument %q is not valid UTF-8 text", at)
		}
		n := utf8.RuneCountInString(s)
		if m, ok := intOf(p["minLength"]); ok && n < m {
			if m == 1 {
				return x, fmt.Sprintf("argument %q is empty", at)
			}
			return x, fmt.Sprintf("argument %q is %d characters, fewer than the %d needed", at, n, m)
		}
		if m, ok := intOf(p["maxLength"]); ok && n > m {
			return x, fmt.Sprintf("argument %q is %d characters, more than the %d allowed; shorten it", at, n, m)
		}
		if enum := strList(p["enum"]); len(enum) > 0 {
			folded := strings.ToLower(strings.TrimSpace(s))
			for _, e := range enum {
				if folded == e {
					return s, ""
				}
			}
			return x, fmt.Sprintf("argument %q is %q; use one of %s", at, truncate(s, 40), strings.Join(quoteAll(enum), ", "))
		}
		return s, ""
	case "integer", "number":
		var f float64
		switch n := x.(type) {
		case float64:
			f = n
		case int:
			f = float64(n)
		case int64:
			f = float64(n)
		case json.Number:
			var err error
			if f, err = n.Float64(); err != nil {
				return x, fmt.Sprintf("argument %q must be a number, got %q", at, n.String())
			}
		case string:
			var err error
			f, err = strconv.ParseFloat(strings.TrimSpace(n), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return x, fmt.Sprintf("argument %q must be %s, got the string %q", at, aNumber(typ), truncate(n, 40))
			}
		default:
			return x, fmt.Sprintf("argument %q must be %s, got %s", at, aNumber(typ), describeValue(x))
		}
		if typ == "integer" && f != math.Trunc(f) {
			return x, fmt.Sprintf("argument %q must be a whole number, got %v", at, f)
		}
		lo, hasLo := numOf(p["minimum"])
		hi, hasHi := numOf(p["maximum"])
		if (hasLo && f < lo) || (hasHi && f > hi) {
			switch {
			case hasLo && hasHi:
				return x, fmt.Sprintf("argument %q must be from %v to %v, got %v", at, lo, hi, f)
			case hasLo:
				return x, fmt.Sprintf("argument %q must be at least %v, got %v", at, lo, f)
			default:
				return x, fmt.Sprintf("argument %q must be at most %v, got %v", at, hi, f)
			}
		}
		return f, ""
	case "boolean":
		switch b := x.(type) {
		case bool:
			return b, ""
		case string:
			if t, err := strconv.ParseBool(strings.TrimSpace(b)); err == nil {
				return t, ""
			}
		}
		return x, fmt.Sprintf("argument %q must be true or false, got %s", at, describeValue(x))
	case "array":
		list, ok := x.([]any)
		if str, isStr := x.(string); isStr && !ok {
			// One string where a list of strings is declared: a list of one.
			if items, _ := p["items"].(prop); items != nil && items["type"] == "string" {
				list, ok = []any{str}, true
			}
		}
		if !ok {
			return x, fmt.Sprintf("argument %q must be a list, got %s", at, describeValue(x))
		}
		if m, ok := intOf(p["minItems"]); ok && len(list) < m {
			return x, fmt.Sprintf("argument %q has %d items, fewer than the %d needed", at, len(list), m)
		}
		if m, ok := intOf(p["maxItems"]); ok && len(list) > m {
			return x, fmt.Sprintf("argument %q has %d items, more than the %d allowed; split it over several calls", at, len(list), m)
		}
		items, _ := p["items"].(prop)
		if items == nil {
			if m, ok := p["items"].(map[string]any); ok {
				items = prop(m)
			}
		}
		for i, e := range list {
			if items == nil {
				break
			}
			y, prob := v.value(fmt.Sprintf("%s[%d]", at, i), items, e)
			if prob != "" {
				return x, prob
			}
			list[i] = y
		}
		return list, ""
	case "object":
		obj, ok := x.(map[string]any)
		if !ok {
			return x, fmt.Sprintf("argument %q must be an object, got %s", at, describeValue(x))
		}
		if prob := v.object(at+".", map[string]any(p), obj); prob != "" {
			return x, prob
		}
		return obj, ""
	}
	return x, ""
}

func aNumber(typ string) string {
	if typ == "integer" {
		return "a whole number"
	}
	return "a number"
}

// describeValue names a JSON value's type, with a short sample.
func describeValue(x any) string {
	switch t := x.(type) {
	case string:
		return fmt.Sprintf("the string %q", truncate(t, 40))
	case float64:
		return fmt.Sprintf("the number %v", t)
	case bool:
		return fmt.Sprintf("%v", t)
	}
	return jsonType(x)
}

// usage is a one-line summary of a tool's arguments: "action
// (add|replace|remove), target (memory|user), content, ... — required:
// query".
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
				part += fmt.Sprintf(" %v–%v", lo, hi)
			}
			part += ")"
		}
		if req[f.name] {
			part += " [required]"
		}
		parts = append(parts, part)
	}
	out := strings.Join(parts, ", ")
	if hint, ok := s["x-nexus-usage"].(string); ok {
		out += "; " + hint
	}
	return out
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

func orList(at string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(at + n)
	}
	return strings.Join(q, " or ")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
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

func anyList(x any) []map[string]any {
	switch t := x.(type) {
	case []map[string]any:
		return t
	case []any:
		var out []map[string]any
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
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
