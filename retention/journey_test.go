package retention

import (
	"strings"
	"testing"
	"time"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/livelog"
)

func TestJourney(t *testing.T) {
	v := mustVault(t)
	if _, err := agents.WriteFact(v, "lyra", fact("Alpha"), t0); err != nil {
		t.Fatal(err)
	}
	upd := fact("Alpha")
	upd.Update, upd.Body = true, "new"
	if _, err := agents.WriteFact(v, "lyra", upd, t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := agents.WriteFact(v, "lyra", fact("Gone"), t0); err != nil {
		t.Fatal(err)
	}
	if _, err := agents.RemoveFact(v, "lyra", "gone", t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	a := mustRetain(t, v, "lyra", fact("Beta"), t0.Add(time.Hour))
	if _, err := Reject(v, a.ID, Decision{By: "alice", Why: "no", Now: t0.Add(4 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	mustRetain(t, v, "orion", fact("Other"), t0.Add(time.Hour))
	l, err := livelog.Open(v, livelog.Options{Now: func() time.Time { return t0.Add(5 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Record("lyra", livelog.Decision{Title: "Ship on Tuesdays", Decision: "We ship on Tuesdays."}); err != nil {
		t.Fatal(err)
	}
	evs, err := Journey(v, JourneyOptions{Agent: "lyra"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Kind+" "+e.Time.Format("15:04"))
		if e.Agent != "lyra" {
			t.Fatalf("event of %s in lyra's journey", e.Agent)
		}
	}
	want := []string{"fact created 15:00", "fact created 15:00", "proposed 16:00", "fact updated 17:00", "fact archived 18:00", "rejected 19:00", "decision 20:00"}
	if len(got) != len(want) {
		t.Fatalf("journey = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("journey = %v, want %v", got, want)
		}
	}
	// A fact archived later was created where facts live, and the event
	// says where the file is now; its archiving points at the archive.
	for _, e := range evs {
		if e.Title != "Gone" {
			continue
		}
		switch e.Kind {
		case EventFactCreated:
			if e.Path != "agents/lyra/memory/gone.md" || !strings.HasPrefix(e.Now, "review/archive/facts/lyra/gone.") {
				t.Errorf("creation of an archived fact: path %q, now %q", e.Path, e.Now)
			}
		case EventFactArchived:
			if !strings.HasPrefix(e.Path, "review/archive/facts/lyra/gone.") || e.Now != "" {
				t.Errorf("archiving: path %q, now %q", e.Path, e.Now)
			}
		}
	}
	since, err := Journey(v, JourneyOptions{Since: t0.Add(4 * time.Hour)})
	if err != nil || len(since) != 2 {
		t.Fatalf("since: %+v, %v", since, err)
	}
}

// TestJourneySameInstant: a proposal approved in the same second as it was
// made reads in the order things happened: proposed, approved, created.
func TestJourneySameInstant(t *testing.T) {
	v := mustVault(t)
	it := mustRetain(t, v, "lyra", fact("Quick"), t0)
	if _, err := Approve(v, it.ID, Decision{By: "alice", Now: t0}); err != nil {
		t.Fatal(err)
	}
	evs, err := Journey(v, JourneyOptions{Agent: "lyra"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.Kind)
	}
	if strings.Join(got, ", ") != "proposed, approved, fact created" {
		t.Fatalf("journey = %v", got)
	}
}

// TestJourneyObsidianDecision: a status edit in Obsidian that names nobody
// reads "in Obsidian", not "by obsidian".
func TestJourneyObsidianDecision(t *testing.T) {
	v := mustVault(t)
	it := mustRetain(t, v, "lyra", fact("Edited"), t0)
	setStatus(t, v, it.Path, "approved", "")
	if _, err := Reconcile(v, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	evs, err := Journey(v, JourneyOptions{Agent: "lyra"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Kind == EventApproved && e.Title != "fact: Edited — about Edited (in Obsidian)" {
			t.Errorf("approval title %q", e.Title)
		}
	}
}
