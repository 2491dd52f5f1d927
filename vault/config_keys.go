package vault

import (
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// UnknownConfigKeys lists the keys of config.yaml's text that Nexus does
// not know, as dotted paths ("curator.max_item", "agents.lyra.token"),
// each with the known key it most likely meant ("" when none is close).
// Unknown keys are ignored when the config is read — a newer version's
// setting must not stop an older one — so a misspelt limit would
// otherwise silently take its default; doctor reports them. Text that
// does not parse lists nothing (that is the config check's other finding).
func UnknownConfigKeys(data []byte) (keys, meant []string) {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return nil, nil
	}
	unknownKeys(doc.Content[0], reflect.TypeFor[Config](), "", &keys, &meant)
	return keys, meant
}

func unknownKeys(n *yaml.Node, t reflect.Type, prefix string, keys, meant *[]string) {
	if n.Kind != yaml.MappingNode {
		return
	}
	switch t.Kind() {
	case reflect.Map:
		for i := 0; i+1 < len(n.Content); i += 2 {
			unknownKeys(n.Content[i+1], t.Elem(), prefix+n.Content[i].Value+".", keys, meant)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			fields[name] = f.Type
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if ft, ok := fields[key]; ok {
			unknownKeys(n.Content[i+1], ft, prefix+key+".", keys, meant)
			continue
		}
		*keys = append(*keys, prefix+key)
		*meant = append(*meant, closest(key, fields, prefix))
	}
}

// closest is the known key within two edits of key, if one is.
func closest(key string, fields map[string]reflect.Type, prefix string) string {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(key, n); d < bestD {
			best, bestD = prefix+n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, by code point.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}
