package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// maxOps bounds one batch of memory operations.
const maxOps = 50

// maxMemoryText bounds content and old_text: the least bound the memory
// files enforce whatever their limits (agents: max(64 KiB, 4 × limit)
// bytes), far above any entry that fits.
const maxMemoryText = 64 << 10

func (s *Server) memoryTool() tool {
	opSchema := objectSchema(fields{
		{"action", enumProp("add, replace or remove.", agents.ActionAdd, agents.ActionReplace, agents.ActionRemove)},
		{"content", strLen("The entry text (add) or its replacement (replace).", 1, maxMemoryText)},
		{"old_text", strLen("A short, unique, case-sensitive substring of the entry to replace or remove.", 1, maxMemoryText)},
	}, "action")
	return tool{
		def: newToolWithRules("memory", `Edit your bounded memory: MEMORY.md (target "memory": your own notes — environment facts, conventions, lessons learned) or USER.md (target "user": who the user is — preferences, communication style). Both are pasted into your prompt at every session start, so keep entries short, factual and durable.

Actions:
- add: append content as a new entry. Adding an exact duplicate succeeds and writes nothing.
- replace: old_text names one entry (a case-sensitive substring matching exactly one distinct entry); content is its new text.
- remove: old_text names the entry to delete.
Send several changes at once as operations: [{action, content, old_text}, ...]; they apply all or nothing and the limit is checked on the result.
Valid calls: {action: "add", content} | {action: "replace", old_text, content} | {action: "remove", old_text} | {operations: [...]} (each operation follows the same rules), each with an optional target. Send action or operations, never both.

The files have character limits (usage is reported as "67% — 1,474/2,200 chars"). When an add or replace would go over, nothing is written and the error gives the usage, the entry's size and the limit, with current_entries: consolidate in the same turn — remove stale entries and replace several related ones with one shorter entry, in a single operations batch — then retry the add.
If old_text matches no entry or several different ones, the error lists the candidates: call again with a longer, unique old_text.
Content is scanned: prompt-injection phrasing, secrets and credentials, exfiltration commands and invisible Unicode are refused with the rule's name; rewrite without them (never store secrets).
When the vault requires review, a successful write returns staged: true and pending_id: it lands once a person approves.
Returns {success, message, target, usage, entry_count, error, current_entries, matches, staged, pending_id, curator_notice}; curator_notice names a proposal waiting for a person to move entries out of a nearly full file.`,
			memorySchema(opSchema), memoryRules,
			hints{title: "Edit bounded memory", destructive: true}),
		run: s.memory,
	}
}

// memorySchema is the memory tool's input: one operation (action with
// content and/or old_text as the action needs) or a batch in operations,
// never both — which [memoryRules] checks, the schema being plain at the
// top level.
func memorySchema(opSchema map[string]any) map[string]any {
	return objectSchema(fields{
		{"action", enumProp("What to do (omit when sending operations).", agents.ActionAdd, agents.ActionReplace, agents.ActionRemove)},
		{"target", enumProp(`Which file: "memory" (MEMORY.md, your notes; default) or "user" (USER.md, the user profile).`, string(agents.TargetMemory), string(agents.TargetUser))},
		{"content", strLen("Entry text for add, or the new text for replace. Required for add and replace.", 1, maxMemoryText)},
		{"old_text", strLen("For replace/remove: a short, unique substring of the existing entry. Required for replace and remove.", 1, maxMemoryText)},
		{"operations", prop{"type": "array", "items": opSchema, "minItems": 1, "maxItems": maxOps, "description": "Several operations applied all or nothing, in order, on one target."}},
	})
}

// actionNeeds names the arguments each memory action needs.
var actionNeeds = map[string][]string{
	agents.ActionAdd:     {"content"},
	agents.ActionReplace: {"content", "old_text"},
	agents.ActionRemove:  {"old_text"},
}

// memoryRules: action or operations, exactly one; each action with the
// arguments it needs.
func memoryRules(args map[string]any) string {
	_, one := args["action"]
	ops, batch := args["operations"].([]any)
	switch {
	case one && batch:
		return `send only one of "action" or "operations", not several`
	case !one && !batch:
		return `send one of "action" or "operations"`
	case one:
		return needs("", args)
	}
	for i, op := range ops {
		if p := needs(fmt.Sprintf("operations[%d].", i), op.(map[string]any)); p != "" {
			return p
		}
	}
	return ""
}

// needs checks that op has what its action needs; at prefixes the names.
func needs(at string, op map[string]any) string {
	action, _ := op["action"].(string)
	for _, r := range actionNeeds[action] {
		if _, ok := op[r]; !ok {
			return fmt.Sprintf("missing argument %q, which %q needs when %s is %q", at+r, action, at+"action", action)
		}
	}
	return ""
}

func (s *Server) memory(ctx context.Context, c *call) (any, error) {
	target, err := agents.ParseTarget(strings.TrimSpace(c.str("target", false)))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, vault.ErrInvalid)
	}
	var ops []agents.Op
	if raw := c.objects("operations"); len(raw) > 0 {
		if len(raw) > maxOps {
			return nil, fmt.Errorf("%d operations in one call, more than the %d allowed: %w", len(raw), maxOps, vault.ErrInvalid)
		}
		if c.args["action"] != nil {
			return nil, fmt.Errorf("send either action (one operation) or operations (a batch), not both: %w", vault.ErrInvalid)
		}
		for i, m := range raw {
			oc := &call{agent: c.agent, args: m}
			op := agents.Op{Action: strings.TrimSpace(oc.str("action", true)), Content: oc.str("content", false), OldText: oc.str("old_text", false)}
			if oc.err != nil {
				return nil, fmt.Errorf("operations[%d]: %w", i, oc.err)
			}
			ops = append(ops, op)
		}
	} else {
		action := strings.TrimSpace(c.str("action", false))
		if c.err == nil && action == "" {
			return nil, fmt.Errorf("missing required argument \"action\" (add, replace or remove), or a batch in \"operations\": %w", vault.ErrInvalid)
		}
		ops = []agents.Op{{Action: action, Content: c.str("content", false), OldText: c.str("old_text", false)}}
	}
	if c.err != nil {
		return nil, c.err
	}
	return retention.WriteMemory(s.vault(), c.agent, target, ops, s.provenance(ctx, c.agent), s.now())
}

// provenance says where a write came from: this agent, over MCP, in this
// session.
func (s *Server) provenance(ctx context.Context, agent string) retention.Provenance {
	p := retention.Provenance{Agent: agent, Source: "mcp", Time: s.now().UTC()}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		p.Session = sess.SessionID()
	}
	return p
}
