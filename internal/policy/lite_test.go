package policy

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavy are the packages the lean build of the CLI (go build -tags lite
// ./cmd/nexus, installed as nexus-lite) must not link: the MCP server and
// the search index with the libraries whose package init every start-up of
// the full nexus pays (docs/cli.md, "The lean build").
var heavy = []string{
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/blevesearch/",
	"github.com/mark3labs/mcp-go",
	"github.com/modelcontextprotocol/go-sdk",
	module + "/index",
	module + "/mcpserver",
	module + "/doctor",
}

// light are packages under a heavy prefix that the lean build may link:
// index/holder is the wire to a running index holder, without the search
// engine, through which nexus-lite answers searches (cmd/nexus/search_lite.go);
// index/canvas reads JSON Canvas files with encoding/json alone, for
// `nexus links`, which nexus-lite runs itself.
// That it links no heavy library is checked with everything else here.
var light = []string{module + "/index/holder", module + "/index/canvas"}

func TestLiteBuildLinksNoHeavyPackage(t *testing.T) {
	deps := func(tags ...string) []string {
		args := append([]string{"list"}, tags...)
		out, err := exec.Command("go", append(args, "-deps", module+"/cmd/nexus")...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", tags, err)
		}
		return strings.Fields(string(out))
	}
	matches := func(pkgs []string, prefix string) string {
		for _, p := range pkgs {
			if slices.Contains(light, p) {
				continue
			}
			if p == prefix || strings.HasPrefix(p, strings.TrimSuffix(prefix, "/")+"/") {
				return p
			}
		}
		return ""
	}
	lite, full := deps("-tags", "lite"), deps()
	if matches(lite, "github.com/spf13/cobra") == "" || matches(lite, module+"/livelog") == "" {
		t.Fatalf("the lean build lists neither cobra nor livelog: %v", lite)
	}
	for _, h := range heavy {
		if p := matches(lite, h); p != "" {
			t.Errorf("the lean build of cmd/nexus links %s: a file it compiles imports it; give that file //go:build !lite and forward its command (cmd/nexus/build_lite.go)", p)
		}
		// The full build links the MCP server, the index and doctor;
		// the go-sdk is a test dependency of the MCP server only.
		if h != "github.com/modelcontextprotocol/go-sdk" && matches(full, h) == "" {
			t.Errorf("the full build does not link %s: is this list still right?", h)
		}
	}
}
