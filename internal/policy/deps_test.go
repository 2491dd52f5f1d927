package policy

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/nexus-memory/nexus"

// allowed lists, for each domain package, the Nexus packages it may import
// (directly or not). internal/ helpers are allowed everywhere except where
// noted. The CLI (cmd/...) and the MCP server may import any domain package;
// nothing imports them.
var allowed = map[string][]string{
	"vault":     {},
	"identity":  {"vault"},
	"livelog":   {"vault", "identity"},
	"agents":    {"vault", "identity", "livelog"},
	"index":     {"vault", "identity", "livelog", "agents"},
	"retention": {"vault", "identity", "livelog", "agents"},
	"mcpserver": {"vault", "identity", "livelog", "agents", "index", "retention"},
	"embed":     {"vault"},
}

// forbiddenInDomain are third-party packages only the faces (cmd,
// mcpserver) may use.
var forbiddenInDomain = []string{"github.com/spf13/cobra", "github.com/mark3labs/mcp-go", "github.com/modelcontextprotocol/go-sdk"}

// pkg is what the policy tests read of a package from 'go list -json'.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Deps       []string
}

// listPackages lists the module's packages, as 'go list' sees them.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			return pkgs
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
}

func TestDependencyPolicy(t *testing.T) {
	seen := 0
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		top := strings.SplitN(rel, "/", 2)[0]
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module+"/cmd") || (strings.HasPrefix(d, module+"/mcpserver") && top != "cmd" && top != "mcpserver") {
				t.Errorf("%s imports %s: nothing may import the CLI or the MCP server", p.ImportPath, d)
			}
		}
		allow, domain := allowed[top]
		if !domain || top == "mcpserver" {
			continue
		}
		seen++
		for _, d := range p.Deps {
			for _, f := range forbiddenInDomain {
				if strings.HasPrefix(d, f) {
					t.Errorf("domain package %s imports %s", p.ImportPath, d)
				}
			}
			if !strings.HasPrefix(d, module+"/") {
				continue
			}
			dtop := strings.SplitN(strings.TrimPrefix(d, module+"/"), "/", 2)[0]
			if dtop == top || dtop == "internal" {
				continue
			}
			ok := false
			for _, a := range allow {
				ok = ok || a == dtop
			}
			if !ok {
				t.Errorf("%s imports %s, which the policy does not allow", p.ImportPath, d)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no domain packages found; is the module path right?")
	}
}
