package mcpserver

import (
	"bytes"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
)

// prop is one JSON Schema property.
type prop map[string]any

func strProp(desc string) prop  { return prop{"type": "string", "description": desc} }
func intProp(desc string) prop  { return prop{"type": "integer", "description": desc} }
func numProp(desc string) prop  { return prop{"type": "number", "description": desc} }
func boolProp(desc string) prop { return prop{"type": "boolean", "description": desc} }
func enumProp(desc string, values ...string) prop {
	return prop{"type": "string", "enum": values, "description": desc}
}
func strListProp(desc string) prop {
	return prop{"type": "array", "items": prop{"type": "string"}, "description": desc}
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

// objectSchema builds an object schema; unknown properties are allowed so
// that prompts written for other agents' tools (extra fields) still work.
func objectSchema(props fields, required ...string) map[string]any {
	if props == nil {
		props = fields{}
	}
	s := map[string]any{"type": "object", "properties": props}
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

func newTool(name, description string, schema map[string]any, h hints) mcp.Tool {
	raw, err := json.Marshal(schema)
	if err != nil {
		panic(err) // schemas are literals in this package
	}
	t := mcp.NewToolWithRawSchema(name, description, raw)
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
