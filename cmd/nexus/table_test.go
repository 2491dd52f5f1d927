package main

import (
	"strings"
	"testing"
)

func TestDisplayWidth(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want int
	}{
		{"", 0}, {"abc", 3}, {"배포", 4}, {"배포 plan", 9}, {"日本", 4}, {"ｱ", 1}, {"Ａ", 2},
		{"e\u0301", 1},            // e + combining acute
		{"a\u200bb", 2},           // zero-width space
		{"\u1100\u1161", 2},       // decomposed 가, as macOS may store it
		{"\u1100\u1161\u11a8", 2}, // decomposed 각
	} {
		if got := displayWidth(tt.s); got != tt.want {
			t.Errorf("displayWidth(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
}

// TestTableAlignsKorean checks that the column after a Korean cell starts
// at the same terminal column in every row.
func TestTableAlignsKorean(t *testing.T) {
	var tb table
	tb.row("SLUG", "NAME", "DESCRIPTION")
	tb.row("deploy-rule", "배포 규칙", "스테이징 먼저")
	tb.row("x", "Plain", "tab\there\nnewline")
	var b strings.Builder
	if err := tb.write(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	col := func(line, cell string) int { return displayWidth(line[:strings.Index(line, cell)]) }
	if a, b, c := col(lines[0], "DESCRIPTION"), col(lines[1], "스테이징"), col(lines[2], "tab here newline"); a != b || b != c {
		t.Errorf("third column starts at %d, %d, %d:\n%s", a, b, c, strings.Join(lines, "\n"))
	}
	if strings.HasSuffix(lines[1], " ") {
		t.Errorf("last column padded: %q", lines[1])
	}
}
