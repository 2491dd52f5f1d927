package agents

import "github.com/nexus-memory/nexus/internal/scan"

// scanFactText runs the security scan of SPEC §2 ([scan.In]) over fact
// text, so a fact cannot carry what a memory entry may not.
func scanFactText(s string) error { return scan.In(scan.PlaceFact, s) }

// ShownFact returns f as an agent may read it (fact_read, 'nexus fact
// read', docs/scan.md "At read time"): fact files reach the vault without
// the write scan when a sync tool or a person drops them in, so each field
// that fails the scan now is withheld, replaced by its marker, the body
// paragraph by paragraph; control characters and invisible code points
// (but emoji sequences) are dropped.
func ShownFact(f Fact) Fact {
	where := f.Path
	if where == "" {
		where = FactPath(f.Agent, f.Slug)
	}
	how := "a person can read and fix " + where
	for _, fl := range []struct {
		name string
		p    *string
	}{{"name", &f.Name}, {"description", &f.Description}, {"source", &f.Source}, {"type", &f.Type}} {
		if rule := scan.ReadRule(*fl.p); rule != "" {
			*fl.p = scan.Withheld(rule, "the "+fl.name+" of fact "+f.Slug, how)
		}
		*fl.p = scan.Shown(*fl.p)
	}
	if f.Body != "" {
		f.Body, _ = scan.Withhold(f.Body, func(rule string, first, last int) string {
			return scan.Withheld(rule, scan.LineRange(first, last)+" of the body of fact "+f.Slug, how)
		})
		f.Body = scan.Shown(f.Body)
	}
	return f
}
