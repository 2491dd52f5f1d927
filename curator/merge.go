package curator

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/agents"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// Merge proposals (docs/curation.md): two or more facts of one agent that
// say nearly the same thing become one. The rule is script-neutral: the
// description and body of each fact are NFKC-folded and lower-cased,
// everything but letters, digits and combining marks becomes one space, and
// the text is cut into overlapping three-character shingles (Hangul
// syllables count one character each, like Latin letters). Two facts are
// near duplicates when the Jaccard similarity of their shingle sets is at
// least curator merge_percent (default 70) and the numbers of one (runs of
// digits) all appear in the other: "port 2222" and "port 2223" are two
// facts, not one.

// maxMergesPerPass bounds merge proposals per agent and pass.
const maxMergesPerPass = 5

// mergeText is what the similarity compares.
func mergeText(f agents.Fact) string { return f.Description + "\n" + f.Body }

// shingles returns the folded text's three-character shingles (the whole
// text when shorter) and its numbers.
func shingles(s string) (map[string]struct{}, map[string]struct{}) {
	s = strings.ToLower(norm.NFKC.String(s))
	var b strings.Builder
	space := true
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
			space = false
		} else if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	folded := strings.TrimSpace(b.String())
	rs := []rune(folded)
	grams := map[string]struct{}{}
	if len(rs) > 0 && len(rs) < 3 {
		grams[folded] = struct{}{}
	}
	for i := 0; i+3 <= len(rs); i++ {
		grams[string(rs[i:i+3])] = struct{}{}
	}
	nums := map[string]struct{}{}
	for _, w := range strings.FieldsFunc(folded, func(r rune) bool { return !unicode.IsDigit(r) }) {
		nums[w] = struct{}{}
	}
	return grams, nums
}

// similarity is the Jaccard similarity of two shingle sets (0..1).
func similarity(a, b map[string]struct{}) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	inter := 0
	for g := range a {
		if _, ok := b[g]; ok {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// numbersAgree reports whether the numbers of the fact with fewer of them
// all appear in the other.
func numbersAgree(a, b map[string]struct{}) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for n := range a {
		if _, ok := b[n]; !ok {
			return false
		}
	}
	return true
}

// mergeCand is one fact the merge rule looks at.
type mergeCand struct {
	FactState
	fact   agents.Fact
	grams  map[string]struct{}
	nums   map[string]struct{}
	pinned bool
}

// keeperFirst orders merge candidates by who would be kept: pinned first
// (a pinned fact is never archived), then the most recalled, then the
// newest, then by slug.
func keeperFirst(a, b *mergeCand) int {
	if a.pinned != b.pinned {
		if a.pinned {
			return -1
		}
		return 1
	}
	if a.Use.Reads != b.Use.Reads {
		return b.Use.Reads - a.Use.Reads
	}
	if ta, tb := latest(a.Created, a.Updated), latest(b.Created, b.Updated); !ta.Equal(tb) {
		if ta.After(tb) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Slug, b.Slug)
}

// mergeGroups finds near-duplicate groups among facts not in skip: each
// candidate in keeper order takes every later unassigned candidate similar
// to it. Pinned facts are kept or left alone, never merged away.
func mergeGroups(v *vault.Vault, agent string, facts []FactState, skip map[string]bool) ([][]*mergeCand, map[[2]string]int) {
	var cands []*mergeCand
	for _, fs := range facts {
		if skip[fs.Slug] {
			continue
		}
		f, err := agents.ParseFact(fs.Slug, fs.data)
		if err != nil {
			continue
		}
		f.Agent, f.Path = agent, fs.Path
		g, n := shingles(mergeText(f))
		cands = append(cands, &mergeCand{FactState: fs, fact: f, grams: g, nums: n, pinned: fs.State == StatePinned})
	}
	slices.SortStableFunc(cands, keeperFirst)
	threshold := float64(v.Config().Curator.MergePercent()) / 100
	sims := map[[2]string]int{}
	taken := map[string]bool{}
	var groups [][]*mergeCand
	for i, keep := range cands {
		if taken[keep.Slug] {
			continue
		}
		group := []*mergeCand{keep}
		for _, c := range cands[i+1:] {
			if taken[c.Slug] || c.pinned {
				continue
			}
			s := similarity(keep.grams, c.grams)
			if s+1e-9 < threshold || !numbersAgree(keep.nums, c.nums) {
				continue
			}
			sims[[2]string{keep.Slug, c.Slug}] = int(s*100 + 1e-9)
			group = append(group, c)
		}
		if len(group) > 1 {
			for _, c := range group {
				taken[c.Slug] = true
			}
			groups = append(groups, group)
		}
	}
	return groups, sims
}

// foldLine is how lines are compared when the merge looks for content the
// kept fact lacks.
func foldLine(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(norm.NFKC.String(s)), " "))
}

// mergedBody is the kept fact's body with the distinct lines of each
// merged fact (its description and body lines the kept fact has not got)
// appended under a line naming where they came from.
func mergedBody(keep agents.Fact, others []*mergeCand, day string) string {
	have := map[string]bool{foldLine(keep.Description): true}
	for _, l := range strings.Split(keep.Body, "\n") {
		have[foldLine(l)] = true
	}
	body := strings.TrimRight(keep.Body, "\n ")
	for _, o := range others {
		var add []string
		for _, l := range append([]string{o.fact.Description}, strings.Split(o.fact.Body, "\n")...) {
			k := foldLine(l)
			if k == "" || have[k] {
				continue
			}
			have[k] = true
			add = append(add, strings.TrimRight(l, " \t"))
		}
		if len(add) == 0 {
			continue
		}
		body += fmt.Sprintf("\n\nMerged from %q (curator, %s):\n%s", o.fact.Name, day, strings.Join(add, "\n"))
	}
	return body
}

// mergeProposal plans one merge group: the first fact is kept.
func mergeProposal(v *vault.Vault, agent string, group []*mergeCand, sims map[[2]string]int, now time.Time) (*Proposal, string) {
	keep, others := group[0], group[1:]
	body := mergedBody(keep.fact, others, fmtDay(now))
	in, err := agents.FactInput{Name: keep.fact.Name, Description: keep.fact.Description, Type: keep.fact.Type, Body: body, Update: true}.Check()
	if err != nil {
		return nil, fmt.Sprintf("%s: facts %s say nearly the same thing, but the merged fact would be refused (%v); merge them by hand", agent, groupSlugs(group), err)
	}
	cfg := v.Config().Curator
	p := &Proposal{Kind: retention.KindMerge, Agent: agent}
	p.plan = curatorPlan{Kind: retention.KindMerge, Agent: agent, Keep: &planFact{Slug: keep.Slug, SHA256: keep.sha}, Body: in.Body}
	why := "the most recalled"
	switch {
	case keep.pinned:
		why = "pinned"
	case slices.IndexFunc(others, func(o *mergeCand) bool { return o.Use.Reads == keep.Use.Reads }) >= 0:
		why = "the newest of the most recalled"
	}
	p.Evidence = append(p.Evidence, fmt.Sprintf("%s is kept (%s): %s; created %s, updated %s", keep.Slug, why, useEvidence(keep.Use), fmtDay(keep.Created), fmtDay(keep.Updated)))
	var diff strings.Builder
	links := map[agents.Target][]agents.Op{}
	for _, o := range others {
		p.plan.Archive = append(p.plan.Archive, planFact{Slug: o.Slug, SHA256: o.sha})
		p.Evidence = append(p.Evidence, fmt.Sprintf("%s: %d%% similar to %s (merge at %d%%, numbers agree)%s; %s; created %s, updated %s",
			o.Slug, sims[[2]string{keep.Slug, o.Slug}], keep.Slug, cfg.MergePercent(), wordsOnlyIn(keep.fact, o.fact), useEvidence(o.Use), fmtDay(o.Created), fmtDay(o.Updated)))
	}
	fmt.Fprintf(&diff, "%s (kept; updated: becomes the time you approve):\n", keep.Path)
	if added := strings.TrimPrefix(in.Body, strings.TrimRight(keep.fact.Body, "\n ")); added != "" && added != in.Body {
		fmt.Fprintf(&diff, "%s\n", prefixLines("+ ", strings.TrimPrefix(added, "\n")))
	} else {
		diff.WriteString("  (body unchanged: the merged facts hold nothing it lacks)\n")
	}
	for _, o := range others {
		fmt.Fprintf(&diff, "move %s → %s/%s.TIME.md (byte for byte; TIME is when you approve)\n", o.Path, agents.ArchivedFactsDir(agent), o.Slug)
		fmt.Fprintf(&diff, "%s: - %s\n", agents.HomePath(agent, agents.IndexFile), agents.IndexLine(o.Slug, o.fact.Name, o.fact.Description))
	}
	// Links to a merged fact in MEMORY.md/USER.md (spill pointers, a
	// person's [[links]]) follow it to the kept one.
	for _, t := range []agents.Target{agents.TargetMemory, agents.TargetUser} {
		m, err := agents.OpenMemory(v, agent, t)
		if err != nil {
			continue
		}
		entries, err := m.Entries()
		if err != nil {
			continue
		}
		for _, e := range entries {
			ne := e
			for _, o := range others {
				ne = relink(ne, o.Slug, keep.Slug)
			}
			if ne == e {
				continue
			}
			ops := append(append([]agents.Op(nil), links[t]...), agents.Op{Action: agents.ActionReplace, OldText: e, Content: ne})
			if _, err := m.Check(ops...); err != nil {
				continue // ambiguous or refused: the link stays as it is
			}
			links[t] = ops
			fmt.Fprintf(&diff, "%s:\n%s\n%s\n", m.Path(), prefixLines("- ", e), prefixLines("+ ", ne))
		}
	}
	for _, t := range []agents.Target{agents.TargetMemory, agents.TargetUser} {
		if len(links[t]) > 0 {
			p.plan.Links = append(p.plan.Links, planLinks{Target: string(t), Ops: links[t]})
		}
	}
	p.Summary = fmt.Sprintf("merge %d near-duplicate facts into %s: %s", len(group), keep.Slug, groupSlugs(others))
	p.Diff = strings.TrimRight(diff.String(), "\n")
	return p, ""
}

// wordsOnlyIn names the words only one of two facts has (up to 8 each),
// so a person sees at once whether they differ by a detail or contradict
// each other ("dark" and "light" mode are similar texts).
func wordsOnlyIn(a, b agents.Fact) string {
	wa, wb := words(mergeText(a)), words(mergeText(b))
	only := func(x, y []string) string {
		in := map[string]bool{}
		for _, w := range y {
			in[w] = true
		}
		var out []string
		for _, w := range x {
			if !in[w] && len(out) < 8 {
				out = append(out, w)
			}
		}
		if len(out) == 0 {
			return "none"
		}
		return strings.Join(out, " ")
	}
	return fmt.Sprintf("; words only in %s: %s; only in %s: %s", a.Slug, only(wa, wb), b.Slug, only(wb, wa))
}

// words are the distinct folded words of s, in order.
func words(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(norm.NFKC.String(s)), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r))
	}) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// relink points [[from]] and [[from|...]] links at to.
func relink(s, from, to string) string {
	s = strings.ReplaceAll(s, "[["+from+"]]", "[["+to+"]]")
	return strings.ReplaceAll(s, "[["+from+"|", "[["+to+"|")
}

func groupSlugs(g []*mergeCand) string {
	s := make([]string, len(g))
	for i, c := range g {
		s[i] = c.Slug
	}
	return strings.Join(s, ", ")
}

// mergeKey names a merge by its facts as they were: a rejected merge is
// not proposed again until one of them changes.
func mergeKey(agent string, plan curatorPlan) string {
	var parts []string
	if plan.Keep != nil {
		parts = append(parts, plan.Keep.Slug+"@"+plan.Keep.SHA256)
	}
	for _, f := range plan.Archive {
		parts = append(parts, f.Slug+"@"+f.SHA256)
	}
	sort.Strings(parts)
	return agent + "/" + strings.Join(parts, ",")
}

func groupKey(agent string, g []*mergeCand) string {
	plan := curatorPlan{Keep: &planFact{Slug: g[0].Slug, SHA256: g[0].sha}}
	for _, c := range g[1:] {
		plan.Archive = append(plan.Archive, planFact{Slug: c.Slug, SHA256: c.sha})
	}
	return mergeKey(agent, plan)
}

// archiveDest is where agents.RemoveFact will move a fact archived at now.
func archiveDest(v *vault.Vault, agent, slug string, now time.Time) string {
	stamp := now.UTC().Format("20060102T150405Z")
	for i := 1; ; i++ {
		dst := path.Join(agents.ArchivedFactsDir(agent), slug+"."+stamp+".md")
		if i > 1 {
			dst = path.Join(agents.ArchivedFactsDir(agent), fmt.Sprintf("%s.%s-%d.md", slug, stamp, i))
		}
		if _, err := vault.Lstat(v.MustPath(dst)); errors.Is(err, fs.ErrNotExist) {
			return dst
		}
	}
}
