package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// blockRule is the frame line above and below each block of the
// session-start render: 46 "═", as Hermes Agent draws it.
var blockRule = strings.Repeat("═", 46)

// Block titles of the session-start render.
const (
	titleMemory = "MEMORY (your personal notes)"
	titleUser   = "USER PROFILE (who the user is)"
)

// RenderSnapshot renders the session-start view of an agent (the "frozen
// snapshot"): its identity (the body of IDENTITY.md, frontmatter left out),
// then the MEMORY.md and USER.md blocks exactly as Hermes Agent renders them,
// then the memory index of fact files (see [RenderIndex]). Empty files are
// left out. Entries that fail the security scan appear as
// their [BLOCKED: ...] line. Take it once per session: writes during the
// session do not change what the agent was shown.
//
// The result ends with a newline; blocks are separated by a blank line.
func RenderSnapshot(v *vault.Vault, agent string) (string, error) {
	id, err := identity.Load(v, agent)
	if err != nil && (id == nil || !(errors.Is(err, identity.ErrKey) || errors.Is(err, identity.ErrMalformed))) {
		return "", err
	}
	if err != nil && errors.Is(err, identity.ErrMalformed) {
		// A person's typo in the frontmatter must not take the agent
		// offline: show the file as it is, with what to fix.
		copied := *id
		copied.Body = "(" + err.Error() + " — fix the frontmatter between the --- lines)\n\n" + id.Body
		id = &copied
	}
	var blocks []string
	if b := RenderIdentityBlock(id); b != "" {
		blocks = append(blocks, b)
	}
	for _, t := range []Target{TargetMemory, TargetUser} {
		m, err := OpenMemory(v, agent, t)
		if err != nil {
			return "", err
		}
		entries, err := m.Entries()
		if err != nil {
			return "", err
		}
		if b := RenderMemoryBlock(t, entries, m.Limit()); b != "" {
			blocks = append(blocks, b)
		}
	}
	// The index is derived from the fact files; a problem keeping it in
	// step (a read-only vault, say) must not cost the agent its memory.
	idx, err := RenderIndex(v, agent)
	if err != nil {
		idx = fmt.Sprintf("%s\n%s\n%s\n(the memory index could not be read: %v)", blockRule, IndexBanner, blockRule, err)
	}
	if idx = strings.TrimRight(idx, "\n"); idx != "" {
		blocks = append(blocks, idx)
	}
	if len(blocks) == 0 {
		return "", nil
	}
	return strings.Join(blocks, "\n\n") + "\n", nil
}

// RenderSessionStart renders everything an agent is given at the start of
// a session (the MCP prompt session_start, 'nexus prompt'): the
// [RenderSnapshot] blocks, then its unread live-log entries, latest
// checkpoint and current decisions ([livelog.RenderPromptSections], at most
// prompt_log_entries log entries). It reads only: nothing is acknowledged.
func RenderSessionStart(v *vault.Vault, agent string) (string, error) {
	text, err := RenderSnapshot(v, agent)
	if err != nil {
		return "", err
	}
	sections, err := livelog.RenderPromptSections(v, agent, 0)
	if err != nil {
		return "", fmt.Errorf("render the live-log sections: %w", err)
	}
	if sections = strings.TrimRight(sections, "\n"); sections != "" {
		if text != "" {
			text += "\n"
		}
		text += sections + "\n"
	}
	return text, nil
}

// RenderIdentityBlock renders an agent's identity for the session-start
// render, framed like the memory blocks:
//
//	══════════════════════════════════════════════
//	IDENTITY (who you are: agents/lyra/IDENTITY.md)
//	══════════════════════════════════════════════
//	# lyra
//	...
//
// It returns "" for an identity with an empty body.
func RenderIdentityBlock(id *identity.Identity) string {
	if id == nil {
		return ""
	}
	body := strings.TrimSpace(strings.ReplaceAll(id.Body, "\r\n", "\n"))
	if body == "" {
		return ""
	}
	title := fmt.Sprintf("IDENTITY (who you are: %s)", identity.IdentityPath(id.Name))
	return blockRule + "\n" + title + "\n" + blockRule + "\n" + body
}

// RenderMemoryBlock renders one bounded-memory file for the session-start
// render, byte for byte as Hermes Agent does:
//
//	══════════════════════════════════════════════
//	MEMORY (your personal notes) [67% — 1,474/2,200 chars]
//	══════════════════════════════════════════════
//	entry one
//	§
//	entry two
//
// The usage counts the entries as they are on disk; entries failing the
// security scan are shown as their [BLOCKED: ...] line. A file a person
// filled far past its limit (more than twice it, and more than 4,000 code
// points) is shown cut in the middle, with a line saying how much was left
// out. No entries render as "".
func RenderMemoryBlock(t Target, entries []string, limit int) string {
	if len(entries) == 0 {
		return ""
	}
	chars := CharCount(entries)
	content := string(FormatEntries(displayEntries(entries, t.File())))
	if renderCap := max(2*limit, 4000); utf8.RuneCountInString(content) > renderCap {
		r := []rune(content)
		head, tail := renderCap*7/10, renderCap*2/10
		omitted := len(r) - head - tail
		content = string(r[:head]) +
			fmt.Sprintf("\n\n[... %s chars left out: %s is over its limit (%s/%s); consolidate it with memory replace/remove ...]\n\n", groupThousands(omitted), t.File(), groupThousands(chars), groupThousands(limit)) +
			string(r[len(r)-tail:])
	}
	over := ""
	if chars > limit {
		over = " ⚠ OVER BUDGET"
	}
	title := titleMemory
	if t == TargetUser {
		title = titleUser
	}
	header := fmt.Sprintf("%s [%s%s]", title, FormatUsage(chars, limit), over)
	return blockRule + "\n" + header + "\n" + blockRule + "\n" + content
}

// EntryID is a short, stable name for an entry: the first 8 hex digits of
// the SHA-256 of its text. A blocked entry can be removed by "#ID".
func EntryID(entry string) string {
	sum := sha256.Sum256([]byte(entry))
	return hex.EncodeToString(sum[:4])
}

// blockedLine returns the line that stands in for an entry failing the
// security scan, or "" if the entry passes.
func blockedLine(entry, file string) string {
	rule := scan.RuleOf(entry)
	if rule == "" {
		return ""
	}
	id := EntryID(entry)
	return fmt.Sprintf("[BLOCKED: %s — entry #%s of %s failed the security scan and is left out; remove it with old_text \"#%s\"]", rule, id, file, id)
}

// displayEntry returns entry, or its BLOCKED line if it fails the scan.
func displayEntry(entry, file string) string {
	if line := blockedLine(entry, file); line != "" {
		return line
	}
	return entry
}

// displayEntries maps displayEntry over entries.
func displayEntries(entries []string, file string) []string {
	if len(entries) == 0 {
		return nil
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = displayEntry(e, file)
	}
	return out
}
