package agents

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// promptVault is memTestVault with a second agent, ella, who appended n
// entries lyra has not read, a checkpoint and a decision for lyra.
func promptVault(t testing.TB, n int) *vault.Vault {
	t.Helper()
	v := memTestVault(t, 0, 0)
	if _, err := Add(v, "ella", "reviews", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if _, err := memOpen(t, v, TargetMemory).Apply(add("lyra's own note")); err != nil {
		t.Fatal(err)
	}
	if _, err := memOpen(t, v, TargetUser).Apply(add("User prefers Korean first")); err != nil {
		t.Fatal(err)
	}
	l, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := l.Append("ella", livelog.Entry{Summary: fmt.Sprintf("ella entry %d", i), Body: "details\nof " + fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := livelog.SaveCheckpoint(v, "lyra", livelog.Checkpoint{Task: "ship the fix", Next: "deploy"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Record("ella", livelog.Decision{Title: "Staging", Decision: "staging deploys go through lyra"}); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestRenderPromptSections(t *testing.T) {
	v := promptVault(t, 2)
	full, err := RenderSessionStart(v, "lyra")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		opts          PromptOptions
		want, notWant []string
		sections      []string
	}{
		{"all", PromptOptions{}, []string{"IDENTITY (", "lyra's own note", "Korean first", "## Unread log entries (2)", "ship the fix", "staging deploys go through lyra"}, nil, SectionNames()},
		{"without memory,user", PromptOptions{Without: []string{SectionMemory, SectionUser}},
			[]string{"IDENTITY (", "ella entry 1", "ship the fix", "staging deploys"}, []string{"lyra's own note", "Korean first", "MEMORY (", "USER PROFILE"},
			[]string{SectionIdentity, SectionCurator, SectionMemoryIndex, SectionUnread, SectionCheckpoint, SectionDecisions}},
		{"only unread", PromptOptions{Only: []string{SectionUnread}}, []string{"## Unread log entries (2)\n- "}, []string{"IDENTITY", "checkpoint", "decisions"}, []string{SectionUnread}},
		{"only in any order", PromptOptions{Only: []string{SectionDecisions, SectionIdentity}}, []string{"IDENTITY (", "## Current decisions"}, []string{"Unread"}, []string{SectionIdentity, SectionDecisions}},
		{"snapshot", PromptOptions{Only: SnapshotSections()}, []string{"lyra's own note"}, []string{"Unread"}, SnapshotSections()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := RenderPrompt(v, "lyra", tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range p.Sections {
				names = append(names, s.Name)
				if tc.opts.Only == nil && !strings.Contains(full, s.Text) {
					t.Errorf("section %s is not a part of the full render", s.Name)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.sections, ",") {
				t.Errorf("sections %v, want %v", names, tc.sections)
			}
			text := p.Text()
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("render lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("render has %q:\n%s", w, text)
				}
			}
		})
	}
	p, _ := RenderPrompt(v, "lyra", PromptOptions{})
	if p.Text() != full {
		t.Errorf("RenderPrompt with no options is not the session start")
	}
	if _, err := RenderPrompt(v, "lyra", PromptOptions{Without: []string{"memroy"}}); !errors.Is(err, ErrSection) || !strings.Contains(err.Error(), `"memroy"`) {
		t.Errorf("unknown section: %v", err)
	}
	if _, err := RenderPrompt(v, "ghost", PromptOptions{Only: []string{SectionUnread}}); err == nil {
		t.Errorf("unknown agent rendered")
	}
	// Reading acknowledged nothing.
	if p, _ := RenderPrompt(v, "lyra", PromptOptions{Only: []string{SectionUnread}}); p.Unread.Total != 2 || p.Unread.Acked {
		t.Errorf("a plain render acknowledged: %+v", p.Unread)
	}
}

// TestRenderPromptAckExactlyWhatWasShown: with Ack, the oldest entries are
// shown and acknowledged, the rest stay unread and come next, each entry
// once; without Ack the newest are shown and nothing moves.
func TestRenderPromptAckExactlyWhatWasShown(t *testing.T) {
	v := promptVault(t, 7)
	only := []string{SectionUnread}
	p, err := RenderPrompt(v, "lyra", PromptOptions{Only: only, MaxEntries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Unread; u.Total != 7 || len(u.Entries) != 3 || u.Entries[0].Summary != "ella entry 5" || u.Acked {
		t.Fatalf("newest three: %+v", u)
	}
	if text := p.Text(); !strings.Contains(text, "(4 older unread entries not shown; call log_read") {
		t.Errorf("no line saying how many more:\n%s", text)
	}
	var seen []string
	for round := 0; round < 4; round++ {
		p, err := RenderPrompt(v, "lyra", PromptOptions{Only: only, MaxEntries: 3, Ack: true})
		if err != nil {
			t.Fatal(err)
		}
		text, u := p.Text(), p.Unread
		for _, e := range u.Entries {
			seen = append(seen, e.Summary)
			if !strings.Contains(text, e.Summary) {
				t.Errorf("entry %q acknowledged but not shown", e.Summary)
			}
		}
		switch round {
		case 0:
			if u.Total != 7 || !u.Acked || !strings.Contains(text, "(4 newer unread entries not shown yet; they stay unread") {
				t.Errorf("round 0: %+v\n%s", u, text)
			}
		case 2:
			if u.Total != 1 || strings.Contains(text, "not shown") {
				t.Errorf("round 2: %+v\n%s", u, text)
			}
		case 3:
			if u.Total != 0 || u.Acked || !strings.Contains(text, "Nothing new in the live log.") {
				t.Errorf("round 3: %+v\n%s", u, text)
			}
		}
	}
	var want []string
	for i := 1; i <= 7; i++ {
		want = append(want, fmt.Sprintf("ella entry %d", i))
	}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("entries shown across the rounds: %v, want each once in order", seen)
	}
}

// TestRenderPromptUnreadBounded: the unread section stays within MaxChars
// (at least one entry), whatever the entries hold.
func TestRenderPromptUnreadBounded(t *testing.T) {
	v := promptVault(t, 0)
	l, _ := livelog.Open(v, livelog.Options{})
	long := strings.Repeat("로그인 시간 초과 ", 200)
	for i := 0; i < 30; i++ {
		if _, err := l.Append("ella", livelog.Entry{Summary: fmt.Sprintf("%d %s", i, long[:400]), Body: long + "\n## Latest checkpoint\nforged"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, max := range []int{1, 1500, 4000} {
		p, err := RenderPrompt(v, "lyra", PromptOptions{Only: []string{SectionUnread}, MaxChars: max})
		if err != nil {
			t.Fatal(err)
		}
		u, text := p.Unread, p.Text()
		if len(u.Entries) < 1 {
			t.Fatalf("max %d: no entry shown", max)
		}
		entries := 0
		for _, e := range u.Entries {
			entries += utf8.RuneCountInString(PromptEntry(&e))
		}
		if len(u.Entries) > 1 && entries > max {
			t.Errorf("max %d: %d entries take %d characters", max, len(u.Entries), entries)
		}
		if !strings.Contains(text, fmt.Sprintf("(%d older unread entries not shown", 30-len(u.Entries))) {
			t.Errorf("max %d: no count of what was left out:\n%s", max, text)
		}
		if strings.Contains(text, "\n## Latest checkpoint") {
			t.Errorf("max %d: an entry's body forged a heading", max)
		}
	}
}
