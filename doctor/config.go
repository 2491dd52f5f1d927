package doctor

import (
	"context"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/vault"
)

// config checks that .nexus/config.yaml parses, that it holds no key
// Nexus does not know (a typo would silently keep the default), that its
// limits are sensible, and that every token hash belongs to an agent.
func (c *checker) config(ctx context.Context) (string, []Finding, error) {
	path := c.abs(vault.ConfigFile)
	edit := "edit " + Quote(path) + " (for example: ${EDITOR:-vi} " + Quote(path) + ")"
	data, err := vault.ReadFile(path)
	if notExist(err) {
		return "no config.yaml; defaults apply", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return "does not parse", []Finding{{
			Path:    vault.ConfigFile,
			Problem: "config.yaml is not valid YAML: " + err.Error() + "; every command refuses to run until it is fixed",
			Fix:     edit + ", then run " + c.cmd("doctor"),
		}}, nil
	}
	if c.v == nil {
		// The YAML parses, but not into the config's shape.
		_, err := vault.Open(c.root)
		return "does not parse", []Finding{{
			Path:    vault.ConfigFile,
			Problem: fmt.Sprint(err),
			Fix:     edit + ", then run " + c.cmd("doctor"),
		}}, nil
	}
	var findings []Finding
	keys, meant := vault.UnknownConfigKeys(data)
	lines := topKeyLines(data)
	for i, key := range keys {
		f := Finding{
			Path:    vault.ConfigFile,
			Problem: fmt.Sprintf("%s is not a setting Nexus knows, so it is ignored", key),
			Fix:     edit + " and delete the line (or correct it, if it is a typo)",
		}
		// A command for top-level one-line settings only: a nested key's
		// line is not told apart by a pattern, nor a block's end by a line.
		top := !strings.Contains(key, ".") && lines[key].scalar && !strings.ContainsAny(key, "'\n")
		switch {
		case meant[i] != "" && top && lines[meant[i]].line > 0:
			// The right key is there too: renaming would make it twice,
			// which no YAML reader accepts. The typo's line goes.
			f.Problem = fmt.Sprintf("%s (line %d) is not a setting Nexus knows, so it is ignored: %s (line %d) is set too, and its value is the one in force", key, lines[key].line, meant[i], lines[meant[i]].line)
			f.Fix = deleteLine(path, key) + "  # keeps " + meant[i] + " as it is"
		case meant[i] != "" && top:
			f.Problem = fmt.Sprintf("%s (line %d) is not a setting Nexus knows, so it is ignored and %s keeps its default", key, lines[key].line, meant[i])
			f.Fix = "sed -i.bak 's/^" + regexpQuote(key) + ":/" + meant[i] + ":/' " + Quote(path) + " && rm " + Quote(path+".bak") + "  # renames it to " + meant[i]
		case meant[i] != "":
			f.Problem = fmt.Sprintf("%s is not a setting Nexus knows, so it is ignored and %s keeps its default", key, meant[i])
			f.Fix = edit + " and rename " + key + " to " + meant[i] + " (if " + meant[i] + " is already set there, delete the " + key + " line instead)"
		case top:
			f.Problem = fmt.Sprintf("%s (line %d) is not a setting Nexus knows, so it is ignored", key, lines[key].line)
			f.Fix = deleteLine(path, key) + "  # or correct it, if it is a typo"
		}
		findings = append(findings, f)
	}
	for _, key := range []string{"memory_char_limit", "user_char_limit", "memory_index_line_limit", "prompt_log_entries", "snapshots_keep", "checkpoint_history_keep"} {
		if n, ok := raw[key].(int); ok && n <= 0 {
			findings = append(findings, Finding{
				Path:    vault.ConfigFile,
				Problem: fmt.Sprintf("%s is %d; the default is used instead", key, n),
				Fix:     edit + " and set " + key + " to a positive number, or delete the line",
			})
		}
	}
	if lt, ok := raw["lock_timeout"]; ok && lt != nil {
		if d, err := vault.ParseLockTimeout(fmt.Sprint(lt)); err != nil || d <= 0 {
			findings = append(findings, Finding{
				Path:    vault.ConfigFile,
				Problem: fmt.Sprintf("lock_timeout is %v, not a positive duration; the default %s is used instead", lt, vault.DefaultLockTimeout),
				Fix:     edit + " and set lock_timeout to a duration like 30s or 2m, or delete the line",
			})
		}
	}
	cfg := c.v.Config()
	names := make([]string, 0, len(cfg.Agents))
	for n := range cfg.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ac := cfg.Agents[n]
		if ac.TokenSHA256 == "" {
			continue
		}
		if b, err := hex.DecodeString(ac.TokenSHA256); err != nil || len(b) != 32 {
			findings = append(findings, Finding{
				Path:    vault.ConfigFile,
				Problem: fmt.Sprintf("the token hash of agent %s is not a hex SHA-256, so no token can match it", n),
				Fix:     c.cmd("agent", "token", n, "--rotate"),
			})
			continue
		}
		if _, err := identity.Load(c.v, n); err != nil {
			findings = append(findings, Finding{
				Path:    vault.ConfigFile,
				Problem: fmt.Sprintf("agent %s has a token but no usable identity (%v): its token cannot sign anything", n, err),
				Fix:     c.cmd("agent", "add", n) + " (or delete agents: " + n + " from " + Quote(path) + ")",
			})
		}
	}
	return "parses; " + agentSettings(len(cfg.Agents)), findings, nil
}

// agentSettings says how many agents have settings (a token, limits) in
// config.yaml.
func agentSettings(n int) string {
	switch n {
	case 0:
		return "no agent has settings of its own"
	case 1:
		return "1 agent has settings of its own"
	}
	return fmt.Sprintf("%d agents have settings of their own", n)
}

// plural is "1 file", "2 files": a count with its noun in the right number.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// keyLine is where a top-level key of the config is, and whether its
// value is a scalar on that line.
type keyLine struct {
	line   int
	scalar bool
}

// topKeyLines returns where each top-level key of a config file is.
func topKeyLines(data []byte) map[string]keyLine {
	lines := map[string]keyLine{}
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return lines
	}
	m := doc.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if _, ok := lines[m.Content[i].Value]; !ok {
			k, val := m.Content[i], m.Content[i+1]
			lines[k.Value] = keyLine{k.Line, val.Kind == yaml.ScalarNode && val.Line == k.Line && val.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0}
		}
	}
	return lines
}

// deleteLine is the shell command that deletes the top-level key's line
// (a scalar setting: one line) from the config file at path. sed -i.bak
// works with GNU and BSD sed alike; the backup is removed after.
func deleteLine(path, key string) string {
	return "sed -i.bak '/^" + regexpQuote(key) + ":/d' " + Quote(path) + " && rm " + Quote(path+".bak")
}

// regexpQuote escapes the characters a basic regular expression gives a
// meaning to.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`.[]*^$\/`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
