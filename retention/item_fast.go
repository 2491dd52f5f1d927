package retention

import (
	"strings"
)

// fastFrontmatter decodes the frontmatter of a review item without the YAML
// library, for the plain form Nexus writes and people usually keep: one
// "key: value" per line with plain, 'single' or "double" quoted (without
// escapes) scalars, and the provenance block. Anything else — lists, block
// scalars, escapes, anchors, comments after values — returns ok false, and
// the caller decodes with YAML. It exists because listing 1,000 pending
// items with a full YAML parse each takes most of the 50 ms a cold
// 'nexus review' may take. FuzzParseItem checks it agrees with YAML.
func fastFrontmatter(raw []byte) (fm frontmatter, ok bool) {
	var prov *yamlProven
	sawProv := false
	block := "" // the top-level key whose nested lines follow
	indent := 0 // the indentation of the block's first nested line
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.ContainsAny(line, "\t\r\u0085\u2028\u2029") {
			// A tab, or a line break YAML sees inside the line (a lone
			// CR, NEL, LS, PS; even in a comment): YAML decides.
			return fm, false
		}
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		nested := line[0] == ' '
		key, val, found := strings.Cut(trimmed, ":")
		if !found || key == "" || strings.ContainsAny(key, `"'[]{}#&*!|>%@`+"`") || (val != "" && val[0] != ' ') {
			return fm, false
		}
		if key[len(key)-1] == ' ' {
			// "status : approved" is the key "status" to YAML; the
			// plain form never has a space before the colon.
			return fm, false
		}
		if nested {
			// Every key of the block sits at its first key's indentation;
			// a deeper line belongs to a map inside it (provenance: x:
			// time: ...), which is not provenance's own time, so let YAML
			// decide.
			depth := len(line) - len(strings.TrimLeft(line, " "))
			if indent == 0 {
				indent = depth
			}
			if depth != indent {
				return fm, false
			}
			switch block {
			case "provenance":
				s, ok := plainScalar(val)
				if !ok {
					return fm, false
				}
				if prov == nil {
					prov = &yamlProven{}
					fm.Provenance = prov
				}
				switch key {
				case "agent":
					prov.Agent = s
				case "session":
					prov.Session = s
				case "time":
					prov.Time = s
				case "source":
					prov.Source = s
				}
			case "":
				return fm, false
			default:
				// A person's own nested key: not ours, and YAML would
				// ignore it too... unless it is malformed, which the
				// YAML path would report. Let YAML decide.
				return fm, false
			}
			continue
		}
		block, indent = "", 0
		if strings.TrimSpace(val) == "" {
			if key != "provenance" || sawProv {
				return fm, false // a block (ops: list...) or a duplicate key
			}
			sawProv = true
			block = key
			continue
		}
		s, ok := plainScalar(val)
		if !ok {
			return fm, false
		}
		switch key {
		case "id":
			fm.ID = s
		case "agent":
			fm.Agent = s
		case "kind":
			fm.Kind = s
		case "target":
			fm.Target = s
		case "status":
			fm.Status = s
		case "name":
			fm.Name = s
		case "description":
			fm.Description = s
		case "type":
			fm.Type = s
		case "update":
			switch strings.TrimSpace(val) {
			case "true":
				fm.Update = true
			case "false":
			default:
				return fm, false
			}
		case "action":
			fm.Action = s
		case "old_text":
			fm.OldText = s
		case "error":
			fm.Error = s
		case "decided_by":
			fm.DecidedBy = s
		case "decided_at":
			fm.DecidedAt = s
		case "why":
			fm.Why = s
		case "result":
			fm.Result = s
		case "signed_by":
			fm.SignedBy = s
		case "signature":
			fm.Signature = s
		case "ops", "provenance":
			return fm, false
		}
	}
	return fm, true
}

// plainScalar decodes a one-line YAML scalar that needs no YAML library:
// plain text, 'single quoted', or "double quoted" without escapes.
func plainScalar(v string) (string, bool) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "", true
	case v[0] == '"':
		if len(v) < 2 || v[len(v)-1] != '"' || strings.ContainsAny(v[1:len(v)-1], `"\`) {
			return "", false
		}
		return v[1 : len(v)-1], true
	case v[0] == '\'':
		inner := v[1:]
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return "", false
		}
		inner = inner[:len(inner)-1]
		if strings.Contains(strings.ReplaceAll(inner, "''", ""), "'") {
			return "", false
		}
		return strings.ReplaceAll(inner, "''", "'"), true
	case strings.ContainsAny(v[:1], `[]{}|>&*!%@#,?-:`+"`"), strings.Contains(v, " #"), strings.Contains(v, ": "), strings.HasSuffix(v, ":"):
		return "", false
	case v == "~" || v == "null" || v == "Null" || v == "NULL":
		return "", true
	}
	return v, true
}
