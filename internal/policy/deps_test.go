package policy

import (
	"bytes"
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/nexus-memory/nexus"

// allowed lists, for each top-level package, the Nexus packages it may
// import (directly or not): the dependency order, from the vault up to the
// faces. internal/ helpers are allowed everywhere, and import no Nexus
// package outside internal/ themselves. The CLI (cmd/...) may import any
// package; nothing imports it. Only the CLI and the demo (which plays a
// story through a real MCP server) import the MCP server.
var allowed = map[string][]string{
	"vault":     {},
	"identity":  {"vault"},
	"livelog":   {"vault", "identity"},
	"agents":    {"vault", "identity", "livelog"},
	"index":     {"vault", "identity", "livelog", "agents"},
	"person":    {"vault", "identity"},
	"retention": {"vault", "identity", "livelog", "agents", "person"},
	"embed":     {"vault"},
	"links":     {"vault", "index"},
	"hybrid":    {"vault", "identity", "livelog", "agents", "index", "embed"},
	"curator":   {"vault", "identity", "livelog", "agents", "person", "retention"},
	"conflicts": {"vault", "identity", "livelog", "agents", "person", "retention"},
	"doctor":    {"vault", "identity", "livelog", "agents", "index", "person", "retention", "conflicts"},
	"mcpserver": {"vault", "identity", "livelog", "agents", "index", "embed", "hybrid", "links", "person", "retention", "curator", "conflicts"},
	"demo":      {"vault", "identity", "livelog", "agents", "index", "embed", "hybrid", "links", "person", "retention", "curator", "conflicts", "doctor", "mcpserver"},
}

// faces are the top-level packages that talk to people and programs: they
// may use cobra and the MCP SDKs, which domain packages may not. cmd is
// not in allowed (it may import anything); examples are programs that use
// the library as a user would.
var faces = map[string]bool{"cmd": true, "mcpserver": true, "demo": true, "examples": true}

// forbiddenInDomain are third-party packages only the faces (cmd,
// mcpserver) may use.
var forbiddenInDomain = []string{"github.com/spf13/cobra", "github.com/mark3labs/mcp-go", "github.com/modelcontextprotocol/go-sdk"}

// pkg is what the policy tests read of a package from 'go list -json'.
type pkg struct {
	ImportPath string
	Name       string
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
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		top := strings.SplitN(rel, "/", 2)[0]
		seen[top] = true
		for _, d := range p.Deps {
			if strings.HasPrefix(d, module+"/cmd") || (strings.HasPrefix(d, module+"/mcpserver") && top != "cmd" && top != "mcpserver" && top != "demo") {
				t.Errorf("%s imports %s: nothing may import the CLI, and only the CLI and the demo the MCP server", p.ImportPath, d)
			}
		}
		if top == "internal" {
			for _, d := range p.Deps {
				if strings.HasPrefix(d, module+"/") && !strings.HasPrefix(d, module+"/internal/") {
					t.Errorf("%s imports %s: internal/ holds leaf helpers, which import no Nexus package outside internal/", p.ImportPath, d)
				}
			}
			continue
		}
		allow, listed := allowed[top]
		if !listed {
			if !faces[top] {
				t.Errorf("top-level package %s is not in the dependency order (allowed, deps_test.go): add it", p.ImportPath)
			}
			continue
		}
		for _, d := range p.Deps {
			if !faces[top] {
				for _, f := range forbiddenInDomain {
					if strings.HasPrefix(d, f) {
						t.Errorf("domain package %s imports %s", p.ImportPath, d)
					}
				}
			}
			if !strings.HasPrefix(d, module+"/") {
				continue
			}
			dtop := strings.SplitN(strings.TrimPrefix(d, module+"/"), "/", 2)[0]
			if dtop == top || dtop == "internal" {
				continue
			}
			if !slices.Contains(allow, dtop) {
				t.Errorf("%s imports %s, which the policy does not allow", p.ImportPath, d)
			}
		}
	}
	for top := range allowed {
		if !seen[top] {
			t.Errorf("no package %s found; is the module path right, or is the order out of date?", top)
		}
	}
	if !seen["internal"] {
		t.Error("no internal/ packages found")
	}
}

// TestProgramsCarryOutEveryKind: retention carries out the review items of
// the curator and of sync-conflict reconciliation through the handlers
// those packages register (retention.RegisterKind). Every program that
// links retention, the lean build of nexus too, must link both, or it
// could not approve such an item.
func TestProgramsCarryOutEveryKind(t *testing.T) {
	kinds := []string{module + "/curator", module + "/conflicts"}
	check := func(name string, deps []string) {
		for _, k := range kinds {
			if !slices.Contains(deps, k) {
				t.Errorf("%s links retention but not %s: import it where it uses retention (cmd/nexus: cmd_review.go)", name, k)
			}
		}
	}
	mains := 0
	for _, p := range listPackages(t) {
		if p.Name != "main" || !slices.Contains(p.Deps, module+"/retention") {
			continue
		}
		mains++
		check(p.ImportPath, p.Deps)
	}
	if mains == 0 {
		t.Fatal("no program links retention; is the module path right?")
	}
	out, err := exec.Command("go", "list", "-tags", "lite", "-deps", module+"/cmd/nexus").Output()
	if err != nil {
		t.Fatalf("go list -tags lite: %v", err)
	}
	if lite := strings.Fields(string(out)); slices.Contains(lite, module+"/retention") {
		check("the lean build of cmd/nexus", lite)
	} else {
		t.Error("the lean build of cmd/nexus does not link retention: is this test still right?")
	}
}
