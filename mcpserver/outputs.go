package mcpserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/retention"
)

// Every tool declares an outputSchema, made from the Go types its result
// is marshalled from, so the schema cannot drift from what is sent: a
// field added to a result type is in the schema too. The schema is
// "anyOf" the tool's result shapes and the bare error shape
// {success: false, error}, because a refusal's structuredContent is the
// result with an error (memory full: the usage and current_entries) or
// just the error. Every shape may carry "unread_notice", the structured
// form of the "N new log entries ... — call log_read" line.

// outputTypes are the result types of each tool, by name.
func outputTypes() map[string][]any {
	return map[string][]any{
		"memory":          {agents.Result{}},
		"fact_write":      {agents.Fact{}},
		"fact_read":       {agents.Fact{}, factList{}},
		"fact_remove":     {factRemoved{}},
		"memory_search":   {index.Results{}},
		"memory_get":      {getResult{}},
		"memory_links":    {linksResult{}},
		"log_read":        {logReadResult{}},
		"log_append":      {logAppended{}},
		"decision_record": {livelog.Decision{}},
		"decision_list":   {decisionList{}},
		"checkpoint_save": {livelog.Checkpoint{}},
		"checkpoint_load": {checkpointLoaded{}},
		"retain":          {retention.Item{}, retained{}},
	}
}

// unreadNoticeOut is the structured unread notice in a tool result.
type unreadNoticeOut struct {
	// Count is how many live-log entries are unread for the caller.
	Count int `json:"count"`
	// From counts them by writer ("" for lines a person typed).
	From map[string]int `json:"from"`
	// Text is the same line as the text content: "3 new log entries from
	// ella — call log_read".
	Text string `json:"text"`
}

// outputSchema returns the declared outputSchema of tool name, or nil
// for a tool without registered result types.
func outputSchema(name string) json.RawMessage {
	types := outputTypes()[name]
	if len(types) == 0 {
		return nil
	}
	notice := schemaOf(reflect.TypeOf(unreadNoticeOut{}), 0)
	var alts []any
	for _, t := range types {
		s := schemaOf(reflect.TypeOf(t), 0)
		props := s["properties"].(fields)
		if props.get("error") == nil {
			props = append(props, field{"error", prop{"type": "string", "description": "Why the call was refused and what to do instead (only on a refusal)."}})
		}
		props = append(props, field{"unread_notice", notice})
		s["properties"] = props
		alts = append(alts, s)
	}
	alts = append(alts, map[string]any{
		"type": "object",
		"properties": fields{
			{"success", prop{"type": "boolean", "const": false}},
			{"error", prop{"type": "string", "description": "What was wrong and how to call again."}},
			{"unread_notice", notice},
		},
		"required":             []string{"success", "error"},
		"additionalProperties": false,
	})
	raw, err := json.Marshal(map[string]any{"type": "object", "anyOf": alts})
	if err != nil {
		panic(err) // built from this package's types
	}
	return raw
}

var timeType = reflect.TypeOf(time.Time{})

// schemaOf is the JSON Schema of values of t as encoding/json marshals
// them. Fields without omitempty/omitzero are required; slices, maps and
// pointers may be null.
func schemaOf(t reflect.Type, depth int) prop {
	if depth > 8 {
		return prop{}
	}
	nullable := false
	for t.Kind() == reflect.Pointer {
		t, nullable = t.Elem(), true
	}
	var s prop
	switch {
	case t == timeType:
		s = prop{"type": "string", "format": "date-time"}
	case t.Kind() == reflect.String:
		s = prop{"type": "string"}
	case t.Kind() == reflect.Bool:
		s = prop{"type": "boolean"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		s = prop{"type": "integer"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		s = prop{"type": "number"}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		s = prop{"type": "array", "items": schemaOf(t.Elem(), depth+1)}
		nullable = nullable || t.Kind() == reflect.Slice
	case t.Kind() == reflect.Map:
		s = prop{"type": "object", "additionalProperties": schemaOf(t.Elem(), depth+1)}
		nullable = true
	case t.Kind() == reflect.Struct:
		props, required := structFields(t, depth)
		s = prop{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
	default: // interface{}: anything
		return prop{}
	}
	if nullable {
		s["type"] = []string{s["type"].(string), "null"}
	}
	return s
}

// structFields lists t's JSON fields in order, flattening embedded
// structs as encoding/json does.
func structFields(t reflect.Type, depth int) (fields, []string) {
	var props fields
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				p, r := structFields(et, depth)
				props = append(props, p...)
				required = append(required, r...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		props = append(props, field{name, schemaOf(f.Type, depth+1)})
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			required = append(required, name)
		}
	}
	if props == nil {
		props = fields{}
	}
	return props, required
}
