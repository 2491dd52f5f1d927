package mcpserver

import (
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/vault"
)

// FuzzReadNote: whatever path an agent sends to memory_get, a read either
// fails or returns a markdown note inside the vault and outside every
// dot-folder — never a key, the config, or a file outside the vault.
func FuzzReadNote(f *testing.F) {
	v, _, err := vault.Init(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	if _, err := agents.Add(v, "lyra", "", time.Now()); err != nil {
		f.Fatal(err)
	}
	root := v.Root()
	outside := filepath.Join(f.TempDir(), "outside.md")
	os.WriteFile(outside, []byte("OUTSIDE-SECRET"), 0o644)
	os.MkdirAll(filepath.Join(root, "projects"), 0o755)
	os.WriteFile(filepath.Join(root, "projects", "plan.md"), []byte("# plan\n"), 0o644)
	os.WriteFile(filepath.Join(root, ".nexus", "secret.md"), []byte("NEXUS-SECRET"), 0o644)
	os.Symlink(outside, filepath.Join(root, "projects", "out.md"))
	os.Symlink(filepath.Join(root, ".nexus", "keys", "lyra.key"), filepath.Join(root, "projects", "key.md"))
	os.Symlink(filepath.Join(root, ".nexus"), filepath.Join(root, "projects", "state.md"))
	s := &Server{v: v}
	for _, seed := range []string{
		"projects/plan.md", "../outside.md", "/etc/passwd", ".nexus/secret.md", ".nexus/keys/lyra.key",
		"projects/out.md", "projects/key.md", "projects/state.md/secret.md", "projects/../.nexus/secret.md",
		`projects\..\.nexus\secret.md`, "./.nexus/secret.md", "projects//plan.md", "PROJECTS/PLAN.MD",
		"C:/x.md", "projects/plan.md\x00", "agents/lyra/IDENTITY.md", "%2e%2e/outside.md", "projects/./../../outside.md",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, p string) {
		clean, data, err := s.readNote(p)
		if err != nil {
			return
		}
		if vault.Hidden(clean) || !strings.EqualFold(path.Ext(clean), ".md") || strings.HasPrefix(clean, "/") || strings.Contains("/"+clean+"/", "/../") {
			t.Fatalf("readNote(%q) read %q", p, clean)
		}
		for _, secret := range []string{"OUTSIDE-SECRET", "NEXUS-SECRET", "ed25519-private"} {
			if strings.Contains(string(data), secret) {
				t.Fatalf("readNote(%q) leaked %s", p, secret)
			}
		}
	})
}

// FuzzArguments: no argument object, however odd, makes the argument
// helpers panic; every problem becomes an error.
func FuzzArguments(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"path":"x","from":1,"lines":2}`, `{"from":"12"}`, `{"from":1.5}`, `{"from":-1}`, `{"from":1e300}`,
		`{"ack":"maybe"}`, `{"files":["a",1]}`, `{"files":"one"}`, `{"operations":[{"action":"add"},3]}`,
		`{"operations":{"a":1}}`, `{"query":null}`, `{"since":"2026-13-45"}`, `[1,2]`, `"text"`, `null`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var req mcp.CallToolRequest
		if json.Unmarshal([]byte(`{"name":"x","arguments":`+raw+`}`), &req.Params) != nil {
			return
		}
		args, err := argumentsOf(req)
		if err != nil {
			return
		}
		c := &call{agent: "lyra", args: args}
		c.str("path", false)
		c.str("query", true)
		c.integer("from", 1, 1, 1<<30)
		c.integer(c.first("maxResults", "limit"), 10, 1, 100)
		c.number("minScore", 0)
		c.boolean("ack", true)
		c.strs("files")
		for _, op := range c.objects("operations") {
			oc := &call{args: op}
			oc.str("action", true)
		}
		c.date("since", false)
		if c.err != nil && !strings.Contains(c.err.Error(), "argument") {
			t.Fatalf("argument error does not name the argument: %v", c.err)
		}
	})
}

// FuzzCheckArgs compares our wording with the library's verdict: for any
// argument object sent to any tool, explain finds a problem exactly when
// google/jsonschema-go refuses the (converted) arguments; converting never
// turns a call the library takes as sent into a refused one; and a refusal
// is always in our words, never the validator's.
func FuzzCheckArgs(f *testing.F) {
	(&Server{}).tools() // builds every tool's input spec
	var names []string
	inputSpecs.Range(func(k, _ any) bool {
		names = append(names, k.(string))
		return true
	})
	sort.Strings(names)
	for _, seed := range []string{
		`{}`, `{"summary":"x"}`, `{"summary":42}`, `{"summary":null}`, `{"last":"3","ack":"false"}`, `{"last":2.5}`,
		`{"last":0}`, `{"from":"-1","path":"a.md"}`, `{"action":" ADD ","content":"x"}`, `{"operations":[{"action":"add"},3]}`,
		`{"operations":[]}`, `{"files":"one","task":"t"}`, `{"files":["a",1],"task":"t"}`, `{"facts":[{"name":"n"}]}`,
		`{"agent":"ella","summary":"x"}`, `{"Channel":"a","summary":"x"}`, `{"query":"q","maxResults":" 5 ","minScore":"0.5"}`,
		`{"name":"n","description":"d","type":"opinion","body":"b"}`, `{"slug":""}`, `{"lines":1e300,"path":"p"}`,
	} {
		for i := range names {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, raw string) {
		name := names[int(which)%len(names)]
		var args map[string]any
		if json.Unmarshal([]byte(raw), &args) != nil || args == nil {
			return
		}
		v, _ := inputSpecs.Load(name)
		in := v.(*inputSpec)
		rs, err := in.compiled()
		if err != nil {
			t.Fatal(err)
		}
		asSent := rs.Validate(cloneJSON(t, args))
		converted := cloneJSON(t, args)
		coerce(in.schema, converted)
		verdict := rs.Validate(converted)
		problem := explain("lyra", "", in.schema, converted)
		if (verdict == nil) != (problem == "") {
			t.Fatalf("%s(%s): library says %v, explain says %q", name, raw, verdict, problem)
		}
		if asSent == nil && verdict != nil {
			t.Fatalf("%s(%s): converting refused a call the library takes as sent: %v", name, raw, verdict)
		}
		err = checkArgs(name, in, cloneJSON(t, args), "lyra")
		if verdict != nil && err == nil {
			t.Fatalf("%s(%s): accepted though the library refuses: %v", name, raw, verdict)
		}
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, name+": ") || !strings.Contains(msg, ". "+name+" takes ") || strings.Contains(msg, "validating") || strings.Contains(msg, "do not fit the input schema") {
				t.Fatalf("%s(%s): refusal not in our words: %s", name, raw, msg)
			}
		}
	})
}

// cloneJSON copies a decoded JSON value deeply.
func cloneJSON(t *testing.T, m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
