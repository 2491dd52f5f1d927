package agents

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestMemoryMerge(t *testing.T) {
	tests := []struct {
		name       string
		limit      int
		file       string // the file's bytes ("" = no file)
		other      string // the conflict copy ("" = nil: markers only)
		want       []string
		added      []string
		left       []string
		markers    bool
		changed    bool
		backup     bool
		unmergable bool
	}{
		{name: "union of a copy", file: "a\n§\nb", other: "a\n§\nc\n§\nb\n§\nd",
			want: []string{"a", "b", "c", "d"}, added: []string{"c", "d"}, changed: true},
		{name: "copy adds nothing", file: "a\n§\nb", other: "b\n§\na",
			want: []string{"a", "b"}},
		{name: "no file yet", other: "x\n§\ny",
			want: []string{"x", "y"}, added: []string{"x", "y"}, changed: true},
		{name: "over the limit: the rest is left", limit: 12, file: "aaaa", other: "bbbb\n§\ncccccccc\n§\ndd",
			want: []string{"aaaa", "bbbb"}, added: []string{"bbbb"}, left: []string{"cccccccc", "dd"}, changed: true},
		{name: "Korean counts code points", limit: 9, file: "가나", other: "다라",
			want: []string{"가나", "다라"}, added: []string{"다라"}, changed: true},
		{name: "markers: both sides kept",
			file: "a\n§\n<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> laptop\n§\nz",
			want: []string{"a", "mine", "z", "theirs"}, added: []string{"theirs"}, markers: true, changed: true, backup: true},
		{name: "markers with the ancestor: a replaced entry is not brought back",
			file: "a\n§\n<<<<<<< HEAD\nold fixed\n§\nnew mine\n||||||| base\nold\n=======\nold\n§\nnew theirs\n>>>>>>> laptop",
			want: []string{"a", "old fixed", "new mine", "new theirs"}, added: []string{"new theirs"}, markers: true, changed: true, backup: true},
		{name: "broken markers are left alone",
			file: "a\n<<<<<<< HEAD\nmine\n", other: "b", unmergable: true, want: []string{"a\n<<<<<<< HEAD\nmine"}},
		{name: "CRLF copy", file: "a", other: "a\r\n§\r\nb\r\n",
			want: []string{"a", "b"}, added: []string{"b"}, changed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := memTestVault(t, tt.limit, 0)
			m := memOpen(t, v, TargetMemory)
			if tt.file != "" {
				memWrite(t, m, tt.file)
			}
			var other []byte
			if tt.other != "" {
				other = []byte(tt.other)
			}
			res, err := m.Merge(other)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := m.Entries()
			if tt.unmergable {
				if !res.Unmergeable || res.Changed {
					t.Errorf("res = %+v, want unmergeable and unchanged", res)
				}
				raw, _ := memRead(t, m)
				if raw != tt.file {
					t.Errorf("file changed to %q", raw)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("entries %q, want %q", got, tt.want)
			}
			if !slices.Equal(res.Added, tt.added) || !slices.Equal(res.Left, tt.left) || res.Markers != tt.markers || res.Changed != tt.changed {
				t.Errorf("res = %+v; want added %q left %q markers %v changed %v", res, tt.added, tt.left, tt.markers, tt.changed)
			}
			if (res.Backup != "") != tt.backup {
				t.Errorf("backup %q, want one: %v", res.Backup, tt.backup)
			}
			if res.Backup != "" {
				data, err := os.ReadFile(v.MustPath(res.Backup))
				if err != nil || string(data) != tt.file {
					t.Errorf("backup holds %q (%v), want the file as it was", data, err)
				}
			}
			raw, _ := memRead(t, m)
			if strings.Contains(raw, "<<<<<<<") || strings.Contains(raw, "=======") {
				t.Errorf("markers left in the file: %q", raw)
			}
			// Merging the same copy again changes nothing.
			again, err := m.Merge(other)
			if err != nil || again.Changed || len(again.Added) != 0 {
				t.Errorf("second merge = %+v, %v; want no change", again, err)
			}
		})
	}
}

// A person's save during the merge is merged too, not overwritten.
func TestMemoryMergeKeepsASaveDuringTheMerge(t *testing.T) {
	v := memTestVault(t, 0, 0)
	m := memOpen(t, v, TargetMemory)
	memWrite(t, m, "a")
	saved := false
	testHookBeforeReplace = func(path string) {
		if !saved {
			saved = true
			if err := os.WriteFile(path, []byte("a\n§\nperson"), 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { testHookBeforeReplace = nil }()
	if _, err := m.Merge([]byte("a\n§\ncopy")); err != nil {
		t.Fatal(err)
	}
	got, _ := m.Entries()
	if want := []string{"a", "person", "copy"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
}

// Apply on a file left with git markers keeps both sides and writes no
// marker back.
func TestMemoryApplyOnAFileWithMarkers(t *testing.T) {
	v := memTestVault(t, 0, 0)
	m := memOpen(t, v, TargetMemory)
	memWrite(t, m, "<<<<<<< HEAD\nserver note\n=======\nlaptop note\n>>>>>>> laptop\n")
	res, err := m.Apply(add("new"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Entries()
	if want := []string{"server note", "laptop note", "new"}; !slices.Equal(got, want) {
		t.Errorf("entries %q, want %q", got, want)
	}
	if res.Backup == "" {
		t.Error("no backup of the file with markers")
	}
	raw, _ := memRead(t, m)
	if strings.Contains(raw, "<<<<<<<") {
		t.Errorf("markers written back: %q", raw)
	}
}
