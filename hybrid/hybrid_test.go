package hybrid_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nexus-memory/nexus/embed"
	"github.com/nexus-memory/nexus/hybrid"
	"github.com/nexus-memory/nexus/index"
	"github.com/nexus-memory/nexus/vault"
)

// concepts give the fake model its meaning: a text's vector has a 1 in
// dimension i for each concept i one of whose words it holds, plus a
// small constant, so that texts sharing no word are near when they share
// a concept.
var concepts = [][]string{
	{"undo", "revert", "revision", "roll back", "earlier version"},
	{"deploy", "release", "ship", "rollout"},
	{"cook", "recipe", "bake", "oven"},
	{"travel", "flight", "trip", "airport"},
}

const dims = 8

func conceptVector(text string) []float32 {
	v := make([]float32, dims)
	low := strings.ToLower(text)
	for i, words := range concepts {
		for _, w := range words {
			if strings.Contains(low, w) {
				v[i] = 1
			}
		}
	}
	v[dims-1] = 0.05
	return v
}

// fakeServer is an OpenAI-compatible /v1/embeddings endpoint on loopback
// answering with conceptVector; block, when set, holds every request
// until it is closed (or the client gives up); fail, when set, answers
// each request with that status.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests int
	inputs   []string
	block    chan struct{}
	fail     int
	dims     int
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{dims: dims}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.requests++
		f.inputs = append(f.inputs, req.Input...)
		block, fail, d := f.block, f.fail, f.dims
		f.mu.Unlock()
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
				return
			}
		}
		if fail != 0 {
			http.Error(w, "nope", fail)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i, in := range req.Input {
			vec := conceptVector(in)
			if d != dims {
				vec = make([]float32, d)
				vec[0] = 1
			}
			resp.Data = append(resp.Data, item{i, vec})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		f.mu.Lock()
		if f.block != nil {
			close(f.block)
			f.block = nil
		}
		f.mu.Unlock()
		f.Close()
	})
	return f
}

func (f *fakeServer) set(fn func(f *fakeServer)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

var notes = map[string]string{
	// The paraphrase "how do I undo a change" shares no word with it.
	"Version history.md":   "# Version history\n\nEvery save is kept as a revision; roll back to an earlier version from the file menu.\n",
	"Release checklist.md": "# Release checklist\n\nBefore we ship: run the tests, tag the build, start the rollout.\n",
	"Bread.md":             "# Bread\n\nA recipe: bake at 220 degrees in a hot oven.\n",
	// Its title is the query's words exactly.
	"Undo a change.md": "# Undo a change\n\nA stub about the editor's keyboard.\n",
	"Trips/Lisbon.md":  "---\ntags: [travel]\n---\n# Lisbon\n\nFlight at 9 from the airport.\n",
}

// setup makes a vault of notes with search.embeddings set to cfg (a
// block of YAML under embeddings:, "" for none), an index synced with it.
func setup(t *testing.T, cfg string) (*vault.Vault, *index.Index) {
	t.Helper()
	return setupWith(t, cfg, notes)
}

// setupWith is setup with other notes.
func setupWith(t *testing.T, cfg string, notes map[string]string) (*vault.Vault, *index.Index) {
	t.Helper()
	dir := t.TempDir()
	if _, _, err := vault.Init(dir); err != nil {
		t.Fatal(err)
	}
	for rel, text := range notes {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if cfg != "" {
		cf := filepath.Join(dir, ".nexus", "config.yaml")
		f, err := os.OpenFile(cf, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\nsearch:\n  embeddings:\n%s", cfg)
		f.Close()
	}
	v, err := vault.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(v, index.Options{NoServe: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if err := ix.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return v, ix
}

func openaiConfig(url string) string {
	return fmt.Sprintf("    provider: openai\n    url: %s/v1\n    model: concepts\n    query_timeout: 30s\n", url)
}

func paths(hits []index.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Path
	}
	return out
}

func embedAll(t *testing.T, v *vault.Vault) hybrid.Report {
	t.Helper()
	rep, err := hybrid.NewEmbedder(v, nil).Run(context.Background(), nil)
	if err != nil {
		t.Fatalf("embed: %v", err)
	}
	return rep
}

func TestMeaningFindsAParaphraseAndTheTitleStaysFirst(t *testing.T) {
	srv := newFakeServer(t)
	v, ix := setup(t, openaiConfig(srv.URL))
	rep := embedAll(t, v)
	if rep.Cost.Embedded != len(notes) || rep.Status.Embedded != len(notes) {
		t.Fatalf("embedded %d texts, %d sections; want %d", rep.Cost.Embedded, rep.Status.Embedded, len(notes))
	}
	s := hybrid.NewSearcher(v, ix, hybrid.Options{})
	ctx := context.Background()

	// Words alone do not find the note on version history.
	words, err := ix.Search(ctx, index.Query{Text: "how do I undo a change"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(paths(words.Hits), "Version history.md") {
		t.Fatalf("the test is void: words find it: %v", paths(words.Hits))
	}

	res, err := s.Search(ctx, index.Query{Text: "undo a change"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := paths(res.Hits)
	if len(got) < 2 || got[0] != "Undo a change.md" {
		t.Fatalf("hits %v: want the note titled by the query first", got)
	}
	if got[1] != "Version history.md" {
		t.Fatalf("hits %v: want the paraphrased note second, found by meaning", got)
	}
	vh := res.Hits[1]
	if !slices.Equal(vh.Via, []string{hybrid.ViaMeaning}) || vh.Match != hybrid.MatchMeaning || vh.Line != 1 || !strings.Contains(vh.Snippet, "roll back") {
		t.Fatalf("meaning-only hit %+v: want via [meaning], line 1 and the section's first lines", vh)
	}
	if !slices.Contains(res.Hits[0].Via, hybrid.ViaWords) || res.Notice != "" {
		t.Fatalf("first hit via %v, notice %q", res.Hits[0].Via, res.Notice)
	}

	// A filter applies to what meaning finds too.
	res, err = s.Search(ctx, index.Query{Text: "how do I undo a change", PathPrefix: "Trips/"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(paths(res.Hits), "Version history.md") {
		t.Fatalf("path filter ignored by meaning: %v", paths(res.Hits))
	}
	res, err = s.Search(ctx, index.Query{Text: "tag:travel revert"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(paths(res.Hits), "Version history.md") {
		t.Fatalf("tag filter ignored by meaning: %v", paths(res.Hits))
	}
}

func TestAlsoFusesPhrasings(t *testing.T) {
	v, ix := setup(t, "")
	s := hybrid.NewSearcher(v, ix, hybrid.Options{})
	ctx := context.Background()
	res, err := s.Search(ctx, index.Query{Text: "oven"}, []string{"rollout", " ", "OVEN", "airport"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Notice != hybrid.OffNotice {
		t.Fatalf("notice %q: want the one of a vault without a model", res.Notice)
	}
	want := []string{"Bread.md", "Release checklist.md", "Trips/Lisbon.md"}
	if got := paths(res.Hits); !slices.Equal(got, want) {
		t.Fatalf("hits %v, want %v (the query's first, then each phrasing's in order)", got, want)
	}
	if !slices.Equal(res.Hits[0].Via, []string{hybrid.ViaWords}) || !slices.Equal(res.Hits[1].Via, []string{hybrid.ViaAlso}) {
		t.Fatalf("via %v %v", res.Hits[0].Via, res.Hits[1].Via)
	}
	// A note found by two phrasings beats one found by one.
	res, err = s.Search(ctx, index.Query{Text: "oven"}, []string{"ship", "tests"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res.Hits); len(got) != 2 || got[0] != "Release checklist.md" {
		t.Fatalf("hits %v: want the note both phrasings find first", got)
	}
	// An exact title hit of an also phrasing is first too.
	res, err = s.Search(ctx, index.Query{Text: "oven"}, []string{"undo a change"})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(res.Hits); len(got) < 2 || got[0] != "Undo a change.md" {
		t.Fatalf("hits %v: want the note an also phrasing names first", got)
	}
}

func TestNoModelIsTheWordSearchWithANoticeOnce(t *testing.T) {
	v, ix := setup(t, "")
	ctx := context.Background()
	q := index.Query{Text: "recipe"}
	want, err := ix.Search(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hybrid.NewSearcher(v, ix, hybrid.Options{}).Search(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Notice != hybrid.OffNotice {
		t.Fatalf("notice %q, want %q", res.Notice, hybrid.OffNotice)
	}
	res.Notice = ""
	if a, b := jsonOf(t, res), jsonOf(t, want); a != b {
		t.Fatalf("without a model:\n%s\nwant the word search:\n%s", a, b)
	}
	// Once per vault: another searcher (another process) says nothing.
	res, err = hybrid.NewSearcher(v, ix, hybrid.Options{}).Search(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Notice != "" {
		t.Fatalf("second notice %q", res.Notice)
	}
}

func jsonOf(t *testing.T, x any) string {
	t.Helper()
	b, err := json.Marshal(x)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFailingModelFallsBackToWords(t *testing.T) {
	ctx := context.Background()
	q := index.Query{Text: "undo a change"}
	cases := []struct {
		name   string
		break_ func(t *testing.T, srv *fakeServer, v *vault.Vault)
		budget string
		notice string
	}{
		{"down", func(t *testing.T, srv *fakeServer, v *vault.Vault) { srv.Close() }, "30s", "unreachable"},
		{"slow", func(t *testing.T, srv *fakeServer, v *vault.Vault) {
			srv.set(func(f *fakeServer) { f.block = make(chan struct{}) })
		}, "50ms", "too slow"},
		{"rate-limited", func(t *testing.T, srv *fakeServer, v *vault.Vault) {
			srv.set(func(f *fakeServer) { f.fail = http.StatusTooManyRequests })
		}, "30s", "rate-limited"},
		{"wrong dimensions", func(t *testing.T, srv *fakeServer, v *vault.Vault) {
			srv.set(func(f *fakeServer) { f.dims = dims + 3 })
		}, "30s", "dimensions"},
		{"not a model", func(t *testing.T, srv *fakeServer, v *vault.Vault) {
			rewriteConfig(t, v, "    provider: static\n    path: nowhere\n")
		}, "30s", "not a model2vec model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := newFakeServer(t)
			cfg := strings.Replace(openaiConfig(srv.URL), "30s", c.budget, 1)
			v, ix := setup(t, cfg)
			embedAll(t, v)
			c.break_(t, srv, v)
			v2, err := vault.Open(v.Root())
			if err != nil {
				t.Fatal(err)
			}
			want, err := ix.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			res, err := hybrid.NewSearcher(v2, ix, hybrid.Options{}).Search(ctx, q, nil)
			if err != nil {
				t.Fatalf("search failed: %v", err)
			}
			if !strings.Contains(res.Notice, c.notice) || strings.Contains(res.Notice, "\n") {
				t.Fatalf("notice %q, want one line with %q", res.Notice, c.notice)
			}
			if got := paths(res.Hits); !slices.Equal(got, paths(want.Hits)) {
				t.Fatalf("hits %v, want the words' %v", got, paths(want.Hits))
			}
		})
	}
}

func rewriteConfig(t *testing.T, v *vault.Vault, cfg string) {
	t.Helper()
	cf := filepath.Join(v.Root(), ".nexus", "config.yaml")
	data, err := os.ReadFile(cf)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	s = s[:strings.Index(s, "\nsearch:\n")] + "\nsearch:\n  embeddings:\n" + cfg
	if err := os.WriteFile(cf, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEmbeddingIsIncrementalAndAModelChangeReembeds(t *testing.T) {
	srv := newFakeServer(t)
	v, _ := setup(t, openaiConfig(srv.URL))
	first := embedAll(t, v)
	if first.Cost.Embedded != len(notes) {
		t.Fatalf("first run embedded %d", first.Cost.Embedded)
	}
	// A rename embeds nothing; an edit embeds one text.
	if err := os.Rename(filepath.Join(v.Root(), "Bread.md"), filepath.Join(v.Root(), "Sourdough.md")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(v.Root(), "Release checklist.md")
	if err := os.WriteFile(p, []byte("# Release checklist\n\nShip on Fridays only.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := hybrid.NewEmbedder(v, nil)
	rep, err := e.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cost.Embedded != 1 || rep.Cost.Cached != len(notes)-1 {
		t.Fatalf("after a rename and an edit: embedded %d, cached %d", rep.Cost.Embedded, rep.Cost.Cached)
	}
	st, err := hybrid.ReadStatus(v)
	if err != nil {
		t.Fatal(err)
	}
	if st.Sections != len(notes) || st.Embedded != len(notes) || st.Last.Embedded != 1 || st.Store.Model == "" {
		t.Fatalf("status %+v", st)
	}
	// Another model: everything again.
	rewriteConfig(t, v, strings.Replace(openaiConfig(srv.URL), "model: concepts", "model: other", 1))
	v2, err := vault.Open(v.Root())
	if err != nil {
		t.Fatal(err)
	}
	rep, err = hybrid.NewEmbedder(v2, nil).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Cost.Reset || rep.Cost.Embedded != len(notes) {
		t.Fatalf("model change: reset %v, embedded %d", rep.Cost.Reset, rep.Cost.Embedded)
	}
}

func TestNotConfiguredEmbedder(t *testing.T) {
	v, _ := setup(t, "")
	_, err := hybrid.NewEmbedder(v, nil).Run(context.Background(), nil)
	if !errors.Is(err, embed.ErrNotConfigured) {
		t.Fatalf("err %v, want ErrNotConfigured", err)
	}
}

// TestShownHitsHaveSnippets: the rankings by words give snippets only
// to their first Limit hits; a hit from further down that the fusion
// shows gets its snippet afterwards, the one a search by its words gives:
// from the index in the process that holds it, and by a search of its
// note in one that asks a holder.
func TestShownHitsHaveSnippets(t *testing.T) {
	v, ix := setupWith(t, "", map[string]string{
		"Kettles.md":     "# Kettles\n\nA kettle boils water. The kettle whistles. Descale the kettle.\n",
		"Tea.md":         "# Tea\n\nWarm the teapot with water from the kettle first.\n",
		"Kitchen.md":     "# Kitchen\n\nThe kettle stands by the window.\n",
		"Shopping.md":    "# Shopping\n\nBuy a new teapot lid.\n",
		"Long/Stoves.md": "# Stoves\n\nGas or induction.\n\n## Kettle on the stove\n\nA stovetop kettle needs a flat base.\n",
	})
	shownHitsHaveSnippets(t, v, ix)
	ix.Close()
	holder, err := index.Open(v, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	client, err := index.Open(v, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if !client.Remote() {
		t.Fatal("the second index is not a holder's client")
	}
	shownHitsHaveSnippets(t, v, client)
}

func shownHitsHaveSnippets(t *testing.T, v *vault.Vault, ix *index.Index) {
	t.Helper()
	s := hybrid.NewSearcher(v, ix, hybrid.Options{})
	ctx := context.Background()
	lifted := 0
	for _, c := range []struct {
		q    string
		also []string
	}{
		{"kettle", []string{"teapot"}},
		{"kettle", []string{"teapot", "stove"}},
		{"water", []string{"teapot", "lid"}},
	} {
		words, err := ix.Search(ctx, index.Query{Text: c.q, Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		for limit := 1; limit <= 3; limit++ {
			res, err := s.Search(ctx, index.Query{Text: c.q, Limit: limit}, c.also)
			if err != nil {
				t.Fatal(err)
			}
			for rank, h := range res.Hits {
				if h.Snippet == "" {
					t.Fatalf("%q also %q limit %d: hit %d (%s, via %v) has no snippet", c.q, c.also, limit, rank+1, h.Path, h.Via)
				}
				for i, w := range words.Hits {
					if w.Path != h.Path || h.Via[0] != hybrid.ViaWords {
						continue
					}
					if h.Snippet != w.Snippet || h.Line != w.Line {
						t.Fatalf("%q limit %d: %s shows line %d %q, its words' search line %d %q", c.q, limit, h.Path, h.Line, h.Snippet, w.Line, w.Snippet)
					}
					if i >= limit {
						lifted++
					}
				}
			}
		}
	}
	if lifted == 0 {
		t.Fatal("the test is void: no shown hit came from below its word ranking's first Limit")
	}
}
