package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// maxRetain bounds the facts proposed in one call.
const maxRetain = 20

func (s *Server) retainTool() tool {
	factSchema := objectSchema(fields{
		{"name", strLen("Short title of the fact.", 1, agents.MaxFactNameRunes)},
		{"description", strLen("One line saying what it is about.", 1, agents.MaxFactDescriptionRunes)},
		{"type", enumProp("Kind of fact.", agents.FactTypes()...)},
		{"body", strLen("The fact, short.", 1, agents.MaxFactBodyBytes)},
		{"source", strLen("Where it came from (log entry, document, conversation).", 0, agents.MaxFactSourceRunes)},
		{"update", boolProp("On approval, replace an existing fact of the same name.")},
	}, "name", "description", "type", "body")
	return tool{
		def: newToolWithRules("retain", `Propose durable facts for a person to review before they are kept: each becomes review/pending/ID.md with its provenance (you, this session, the time, the source). A person approves, edits or rejects it (in Obsidian or with 'nexus review'); approved facts become fact files.

Use it for things learned in this session that are worth keeping but should be checked by a person — especially facts about the user or about other agents' work. For your own working notes use memory or fact_write instead.
Send one fact as name, description, type and body (source and update optional), or several as facts: [{name, description, type, body, source?, update?}, ...] — not both. Each is validated and scanned like fact_write (injection phrasing, secrets, invisible characters are refused); all are checked before any is filed, so one refused files none. Facts are then filed in order; should filing fail part way (a disk error), the ones already filed are in the result.
Returns the filed item {id, status: "pending", target, path, ...}, or {items: [...]} for several.`,
			objectSchema(fields{
				{"name", strLen("Short title of the fact.", 1, agents.MaxFactNameRunes)},
				{"description", strLen("One line saying what it is about.", 1, agents.MaxFactDescriptionRunes)},
				{"type", enumProp("Kind of fact.", agents.FactTypes()...)},
				{"body", strLen("The fact, short.", 1, agents.MaxFactBodyBytes)},
				{"source", strLen("Where it came from (log entry, document, conversation).", 0, agents.MaxFactSourceRunes)},
				{"update", boolProp("On approval, replace an existing fact of the same name.")},
				{"facts", prop{"type": "array", "items": factSchema, "minItems": 1, "maxItems": maxRetain, "description": "Several facts to propose at once (instead of the arguments above)."}},
			}), retainRules,
			hints{title: "Propose facts for review"}),
		run: s.retain,
	}
}

// oneFact are the arguments of a single fact, the first four required.
var oneFact = []string{"name", "description", "type", "body", "source", "update"}

// retainRules: one fact with its four required arguments, or facts, not
// both.
func retainRules(args map[string]any) string {
	if _, many := args["facts"]; many {
		for _, k := range oneFact {
			if _, ok := args[k]; ok {
				return fmt.Sprintf("send one fact or several in \"facts\", not both: move %q into the facts", k)
			}
		}
		return ""
	}
	for _, k := range oneFact[:4] {
		if _, ok := args[k]; !ok {
			return fmt.Sprintf("missing required argument %q (one fact takes name, description, type and body; several go in \"facts\")", k)
		}
	}
	return ""
}

type retained struct {
	Items []retention.Item `json:"items"`
	Error string           `json:"error,omitempty"`
}

func (s *Server) retain(ctx context.Context, c *call) (any, error) {
	prov := s.provenance(ctx, c.agent)
	if list := c.objects("facts"); len(list) > 0 {
		if len(list) > maxRetain {
			return nil, fmt.Errorf("%d facts in one call, more than the %d allowed: %w", len(list), maxRetain, vault.ErrInvalid)
		}
		out := retained{Items: []retention.Item{}}
		ins := make([]agents.FactInput, len(list))
		for i, m := range list {
			fc := &call{agent: c.agent, args: m}
			ins[i] = factInput(fc)
			if fc.err != nil {
				err := fmt.Errorf("facts[%d]: %w", i, fc.err)
				out.Error = describe(err)
				return out, err
			}
			// Every fact is checked before any is filed: a refused one
			// (the scan, a bad field) files none.
			if err := retention.CheckFact(ins[i]); err != nil {
				err = fmt.Errorf("facts[%d] (%s), so none was filed: %w", i, ins[i].Name, err)
				out.Error = describe(err)
				return out, err
			}
		}
		for i, in := range ins {
			p := prov
			if in.Source != "" {
				p.Source = in.Source
			}
			it, err := retention.Retain(s.vault(), c.agent, in, p, s.now())
			if err != nil {
				err = fmt.Errorf("facts[%d] (%s): %w", i, in.Name, err)
				out.Error = describe(err)
				return out, err
			}
			out.Items = append(out.Items, it)
		}
		return out, nil
	}
	in := factInput(c)
	if c.err != nil {
		return nil, c.err
	}
	if in.Source != "" {
		prov.Source = in.Source
	}
	return retention.Retain(s.vault(), c.agent, in, prov, s.now())
}

func factInput(c *call) agents.FactInput {
	return agents.FactInput{
		Name:        c.str("name", true),
		Description: c.str("description", true),
		Type:        strings.TrimSpace(c.str("type", true)),
		Body:        c.str("body", true),
		Source:      c.str("source", false),
		Update:      c.boolean("update", false),
	}
}
