package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestStructuredResultTextIsJSStringify: the text copy of a structured
// result is byte for byte what JavaScript's JSON.stringify(value, null, 2)
// writes (the want below is node's output), so OpenClaw's MCP bridge, which
// drops a text block equal to that form, gives the model the result once.
func TestStructuredResultTextIsJSStringify(t *testing.T) {
	type nested struct {
		A *int `json:"a"`
		B bool `json:"b"`
	}
	type entry struct {
		Summary string         `json:"summary"`
		Body    string         `json:"body"`
		Tags    []string       `json:"tags"`
		Meta    map[string]any `json:"meta"`
		N       []float64      `json:"n"`
		Nested  []nested       `json:"nested"`
	}
	v := struct {
		Entry entry    `json:"entry"`
		Notes []string `json:"notes"`
	}{
		Entry: entry{
			Summary: "<a&b> 로그인 \u2028 line\u2029sep",
			Body:    `literal \u2028 stays`,
			Tags:    []string{},
			Meta:    map[string]any{},
			N:       []float64{1, 2.5, 1e21, 0.000001},
			Nested:  []nested{{nil, true}},
		},
		Notes: []string{"x"},
	}
	want := "{\n  \"entry\": {\n    \"summary\": \"<a&b> 로그인 \u2028 line\u2029sep\",\n    \"body\": \"literal \\\\u2028 stays\",\n    \"tags\": [],\n    \"meta\": {},\n    \"n\": [\n      1,\n      2.5,\n      1e+21,\n      0.000001\n    ],\n    \"nested\": [\n      {\n        \"a\": null,\n        \"b\": true\n      }\n    ]\n  },\n  \"notes\": [\n    \"x\"\n  ]\n}"
	res := jsonResult(v)
	if len(res.Content) != 1 {
		t.Fatalf("%d content blocks", len(res.Content))
	}
	got := res.Content[0].(mcp.TextContent).Text
	if got != want {
		t.Errorf("text copy:\n%s\nwant (node's JSON.stringify(v, null, 2)):\n%s", got, want)
	}
	// The structured content is the same value.
	var a, b any
	if err := json.Unmarshal(res.StructuredContent.(json.RawMessage), &a); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(got), &b)
	if ja, _ := json.Marshal(a); string(ja) != func() string { jb, _ := json.Marshal(b); return string(jb) }() {
		t.Errorf("text and structured content differ")
	}
	// A result that is not an object has no structured content and stays compact.
	if r := jsonResult([]int{1, 2}); r.StructuredContent != nil || r.Content[0].(mcp.TextContent).Text != "[1,2]" {
		t.Errorf("array result: %+v", r)
	}
}
