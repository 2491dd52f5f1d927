package agents

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nexus-memory/nexus/livelog"
)

// TestPromptDropsControlCharacters: a binary or escape-laden USER.md or
// MEMORY.md brings no NUL, terminal escape or other control character into
// the prompt; its readable text is still shown.
func TestPromptDropsControlCharacters(t *testing.T) {
	tests := []struct {
		name   string
		target Target
		file   string
		shown  string // must still be in the prompt
	}{
		{"NUL and C0 in USER.md", TargetUser, "prefers\x00 short\x01\x02 answers\x07", "prefers short answers"},
		{"terminal escape in MEMORY.md", TargetMemory, "deploys on \x1b[31mFriday\x1b[0m\rnow", "deploys on [31mFriday[0mnow"},
		{"DEL and C1 controls", TargetMemory, "port\x7f 8080\u0085\u009b", "port 8080"},
		{"not UTF-8", TargetUser, "name: Min\xff\xfejun", "name: Min\uFFFDjun"},
		{"a binary file", TargetUser, "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00", "IHDR"},
		{"tabs and newlines stay", TargetMemory, "a\tb\n§\nc", "a\tb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := memTestVault(t, 0, 0)
			memWrite(t, memOpen(t, v, tt.target), tt.file)
			for name, render := range map[string]func() (string, error){
				"snapshot":      func() (string, error) { return RenderSnapshot(v, "lyra") },
				"session start": func() (string, error) { return RenderSessionStart(v, "lyra") },
			} {
				got, err := render()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !utf8.ValidString(got) {
					t.Errorf("%s: not UTF-8: %q", name, got)
				}
				for _, r := range got {
					if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7F && r <= 0x9F) {
						t.Fatalf("%s: control character U+%04X in the prompt:\n%q", name, r, got)
					}
				}
				if !strings.Contains(got, tt.shown) {
					t.Errorf("%s: %q not shown:\n%q", name, tt.shown, got)
				}
			}
		})
	}
}

func TestPrintable(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text\n\tindented", "plain text\n\tindented"},
		{"a\x00b\x1bc\x7fd", "abcd"},
		{"한국어\u0085 메모", "한국어 메모"},
		{"bad \xff\xfe byte", "bad \uFFFD byte"},
		{"crlf\r\nline", "crlf\nline"},
	} {
		if got := printable(tt.in); got != tt.want {
			t.Errorf("printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPromptSurvivesAnUnreadableFeed: a feed the reader may not open costs
// the prompt that feed only; the unread section says which one is left
// out. (Root reads any file: run as another user to see it run.)
func TestPromptSurvivesAnUnreadableFeed(t *testing.T) {
	if os.Geteuid() == 0 || runtime.GOOS == "windows" {
		t.Skip("root reads a file whatever its permissions; livelog's TestUnreadEndLeavesOutUnreadableFeeds covers a read error for root")
	}
	v := promptVault(t, 2)
	if _, err := Add(v, "orion", "ops", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	l, err := livelog.Open(v, livelog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append("orion", livelog.Entry{Summary: "orion rotated the certs"}); err != nil {
		t.Fatal(err)
	}
	feeds, err := filepath.Glob(filepath.Join(v.Root(), "log", "live", "*", "ella@*.md"))
	if err != nil || len(feeds) != 1 {
		t.Fatalf("ella's feed: %v %v", feeds, err)
	}
	if err := os.Chmod(feeds[0], 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(feeds[0], 0o644) })
	for _, opts := range []PromptOptions{{}, {Ack: true}} {
		p, err := RenderPrompt(v, "lyra", opts)
		if err != nil {
			t.Fatalf("ack %v: %v", opts.Ack, err)
		}
		unread, _ := p.Section(SectionUnread)
		rel, _ := filepath.Rel(v.Root(), feeds[0])
		for _, want := range []string{"orion rotated the certs", "left out, could not be read: " + filepath.ToSlash(rel)} {
			if !strings.Contains(unread, want) {
				t.Errorf("ack %v: %q missing from\n%s", opts.Ack, want, unread)
			}
		}
		if strings.Contains(unread, "ella entry") {
			t.Errorf("ack %v: entries of the unreadable feed shown:\n%s", opts.Ack, unread)
		}
		if !strings.Contains(p.Text(), "lyra's own note") {
			t.Errorf("ack %v: the rest of the prompt is missing:\n%s", opts.Ack, p.Text())
		}
	}
}
