package examples

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestOpenClawPluginPackage checks the plugin's package shape, which only a
// real OpenClaw exercises fully (examples/openclaw_test.go, build tag
// openclaw): the openclaw.extensions entry exists, the manifest's id is the
// entry's id, and the manifest's config schema, the entry's own config
// check and the settings the code reads name the same settings.
func TestOpenClawPluginPackage(t *testing.T) {
	dir := "openclaw/plugin"
	var pkg struct {
		Type     string `json:"type"`
		Files    []string
		OpenClaw struct {
			Extensions []string `json:"extensions"`
		} `json:"openclaw"`
	}
	readJSON(t, filepath.Join(dir, "package.json"), &pkg)
	if pkg.Type != "module" || len(pkg.OpenClaw.Extensions) != 1 {
		t.Fatalf("package.json: type %q, openclaw.extensions %v", pkg.Type, pkg.OpenClaw.Extensions)
	}
	for _, f := range append(pkg.Files, pkg.OpenClaw.Extensions...) {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("package.json names %s: %v", f, err)
		}
	}
	var man struct {
		ID           string `json:"id"`
		ConfigSchema struct {
			Type                 string                     `json:"type"`
			AdditionalProperties bool                       `json:"additionalProperties"`
			Properties           map[string]json.RawMessage `json:"properties"`
		} `json:"configSchema"`
		Contracts struct {
			Tools []string `json:"tools"`
		} `json:"contracts"`
	}
	readJSON(t, filepath.Join(dir, "openclaw.plugin.json"), &man)
	src, err := os.ReadFile(filepath.Join(dir, "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	code := string(src)
	if man.ID != "nexus" || !strings.Contains(code, `id: "nexus"`) {
		t.Errorf("manifest id %q; the entry must export the same id", man.ID)
	}
	if man.ConfigSchema.Type != "object" || man.ConfigSchema.AdditionalProperties {
		t.Errorf("configSchema must be a closed object")
	}
	var schema []string
	for k := range man.ConfigSchema.Properties {
		schema = append(schema, k)
	}
	sort.Strings(schema)
	m := regexp.MustCompile(`const known = new Set\(\[([^\]]*)\]\)`).FindStringSubmatch(code)
	if m == nil {
		t.Fatal("index.js: no list of known settings")
	}
	known := regexp.MustCompile(`"(\w+)"`).FindAllStringSubmatch(m[1], -1)
	var names []string
	for _, k := range known {
		names = append(names, k[1])
		if !strings.Contains(code, "c."+k[1]) {
			t.Errorf("setting %s is accepted but never read", k[1])
		}
	}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(schema, ",") {
		t.Errorf("settings differ:\n  manifest configSchema: %v\n  index.js:              %v", schema, names)
	}
	if len(man.Contracts.Tools) != 0 || strings.Contains(code, "registerTool(") {
		t.Errorf("the plugin registers no tools (the Nexus tools come through MCP); contracts.tools %v", man.Contracts.Tools)
	}
}

// TestHermesPluginManifest checks the Hermes plugin folder: plugin.yaml
// names the provider "nexus" and its hook, and __init__.py carries the
// marker Hermes's discovery looks for in its first 8 KiB.
func TestHermesPluginManifest(t *testing.T) {
	data, err := os.ReadFile("hermes/nexus_hermes/plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Name  string   `yaml:"name"`
		Hooks []string `yaml:"hooks"`
	}
	if err := yaml.Unmarshal(data, &man); err != nil {
		t.Fatal(err)
	}
	if man.Name != "nexus" || len(man.Hooks) != 1 || man.Hooks[0] != "pre_llm_call" {
		t.Errorf("plugin.yaml: %+v", man)
	}
	initPy, err := os.ReadFile("hermes/nexus_hermes/__init__.py")
	if err != nil {
		t.Fatal(err)
	}
	if head := string(initPy[:min(len(initPy), 8192)]); !strings.Contains(head, "register_memory_provider") {
		t.Error("__init__.py: Hermes finds memory providers by 'register_memory_provider' in the first 8 KiB")
	}
	py, err := os.ReadFile("hermes/pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(py), `[project.entry-points."hermes_agent.memory_providers"]`) || !strings.Contains(string(py), `nexus = "nexus_hermes"`) {
		t.Error("pyproject.toml: no hermes_agent.memory_providers entry point named nexus")
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
