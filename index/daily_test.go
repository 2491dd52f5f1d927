package index

import (
	"context"
	"testing"
	"time"
)

func TestNameDate(t *testing.T) {
	cases := []struct {
		format, folder, rel string
		want                string // "" for no date
	}{
		{"", "", "Daily/2023-09-12.md", "2023-09-12"},
		{"", "", "notes/2023-09-12 standup.md", "2023-09-12"},
		{"", "", "notes/12023-09-120.md", ""},
		{"", "", "notes/2023-02-30.md", ""},
		{"DD.MM.YYYY", "Journal", "Journal/12.09.2023.md", "2023-09-12"},
		{"DD.MM.YYYY", "Journal", "journal/12.09.2023.md", "2023-09-12"},
		{"DD.MM.YYYY", "Journal", "Other/12.09.2023.md", ""},
		{"YYYY/MM/YYYY-MM-DD dddd", "Daily", "Daily/2023/09/2023-09-12 Tuesday.md", "2023-09-12"},
		{"MMMM Do, YYYY", "", "September 12th, 2023.md", "2023-09-12"},
		{"[Day] YY-M-D", "", "Day 23-9-2.md", "2023-09-02"},
		{"YYYY-[W]ww", "", "2023-W37.md", ""},             // weekly: no one day
		{"DD.MM.YYYY", "", "2023-09-12.md", "2023-09-12"}, // the ISO date still dates a note
	}
	for _, c := range cases {
		df := newDailyFormat(c.format, c.folder)
		got, ok := nameDate(c.rel, df)
		s := ""
		if ok {
			s = got.Format("2006-01-02")
		}
		if s != c.want {
			t.Errorf("%q %q %q: got %q, want %q", c.format, c.folder, c.rel, s, c.want)
		}
	}
}

// TestDailyNotesSettings: Obsidian's daily-notes format and folder date
// the notes of that folder, and a later mtime does not.
func TestDailyNotesSettings(t *testing.T) {
	v := mustVault(t, map[string]string{
		".obsidian/daily-notes.json": `{"format":"DD.MM.YYYY","folder":"Journal","template":""}`,
		"Journal/12.09.2023.md":      "Walked the heron trail\n",
		"Journal/13.09.2023.md":      "Walked the heron bridge\n",
	})
	ix := mustOpen(t, v, Options{})
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := day("2023-09-12")
	res := mustSearch(t, ix, Query{Text: "heron", PathPrefix: "Journal/", Since: d, Until: d.Add(24*time.Hour - 1)})
	if got := paths(res); len(got) != 1 || got[0] != "Journal/12.09.2023.md" {
		t.Fatalf("hits %v, want only Journal/12.09.2023.md", got)
	}
	if !res.Hits[0].Date.Equal(d) {
		t.Errorf("date %v, want %v", res.Hits[0].Date, d)
	}
}
