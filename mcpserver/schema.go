package mcpserver

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// prop is one JSON Schema property.
type prop map[string]any

// strProp is a string property bounded only by maxStringArg.
func strProp(desc string) prop { return strLen(desc, 0, 0) }

// intRange is an integer property bounded to [lo, hi].
func intRange(desc string, lo, hi int) prop {
	return prop{"type": "integer", "minimum": lo, "maximum": hi, "description": desc}
}

// strLen is a string property of minLen to maxLen characters (maxLen 0:
// the bound on any string argument).
func strLen(desc string, minLen, maxLen int) prop {
	if maxLen == 0 {
		maxLen = maxStringArg
	}
	p := prop{"type": "string", "maxLength": maxLen, "description": desc}
	if minLen > 0 {
		p["minLength"] = minLen
	}
	return p
}
func numProp(desc string) prop  { return prop{"type": "number", "description": desc} }
func boolProp(desc string) prop { return prop{"type": "boolean", "description": desc} }
func enumProp(desc string, values ...string) prop {
	return prop{"type": "string", "enum": values, "description": desc}
}

// field is one named property; schemas keep fields in the order written,
// so a model reads the important ones (the required) first.
type field struct {
	name string
	p    prop
}

// fields are an object's properties, marshalled in order.
type fields []field

func (fs fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.name)
		v, err := json.Marshal(f.p)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// objectSchema builds an object schema. Unknown properties are refused
// (SPEC §6): an argument the tool does not take would otherwise be
// silently dropped while the model believes it was used.
func objectSchema(props fields, required ...string) map[string]any {
	if props == nil {
		props = fields{}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// hints are a tool's annotations.
type hints struct {
	title       string
	readOnly    bool
	destructive bool
	idempotent  bool
}

// inputSpecs holds every tool's input by name, as built by newTool, for
// [checkArgs]. The schemas are the same for every server, so the first
// built is kept and compiled once.
var inputSpecs sync.Map // name -> *inputSpec

// argRules checks what a tool's schema cannot say at its top level
// without oneOf, anyOf or allOf (which Anthropic-backed clients refuse,
// SPEC §6): which arguments go together. It runs on arguments that
// already fit the schema and returns the problem, or "".
type argRules func(args map[string]any) string

func newTool(name, description string, schema map[string]any, h hints) mcp.Tool {
	return newToolWithRules(name, description, schema, nil, h)
}

// newToolWithRules is newTool for a tool whose arguments also follow
// rules; its description says them in words.
func newToolWithRules(name, description string, schema map[string]any, rules argRules, h hints) mcp.Tool {
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(err) // schemas are literals in this package
	}
	inputSpecs.LoadOrStore(name, &inputSpec{schema: schema, raw: raw, rules: rules})
	t := mcp.NewToolWithRawSchema(name, description, raw)
	t.RawOutputSchema = outputSchema(name)
	t.Annotations = mcp.ToolAnnotation{
		Title:           h.title,
		ReadOnlyHint:    mcp.ToBoolPtr(h.readOnly),
		DestructiveHint: mcp.ToBoolPtr(h.destructive),
		IdempotentHint:  mcp.ToBoolPtr(h.idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	t.Title = h.title
	return t
}
