package retention

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/vault"
)

// curatorPasses adds one journey event per agent of every curator pass,
// read from the diaries in review/curator/ (what each proposal became is
// in the review items' own events: proposed, approved, rejected).
func curatorPasses(v *vault.Vault, add func(Event)) {
	des, err := vault.ReadDir(v.MustPath(vault.CuratorDir))
	if err != nil {
		return
	}
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasPrefix(name, "c-") || !strings.HasSuffix(name, ".md") {
			continue
		}
		rel := vault.CuratorDir + "/" + name
		data, err := vault.ReadFile(v.MustPath(rel))
		if err != nil {
			continue
		}
		props, _, err := vault.ParseFrontmatter(data)
		if err != nil {
			continue
		}
		at := parseTime(fmt.Sprint(props["time"]))
		if t, ok := props["time"].(time.Time); ok {
			at = t.UTC()
		}
		per, _ := props["agents"].(string)
		kinds := map[string]string{} // agent -> "archive 1, merge 2"
		if ks, ok := props["kinds"].(string); ok {
			for _, kv := range strings.Fields(ks) {
				if agent, list, ok := strings.Cut(kv, "="); ok {
					kinds[agent] = strings.ReplaceAll(strings.ReplaceAll(list, ":", " "), ",", ", ")
				}
			}
		}
		for _, kv := range strings.Fields(per) {
			agent, n, ok := strings.Cut(kv, "=")
			count, err := strconv.Atoi(n)
			if !ok || err != nil {
				continue
			}
			noun := "proposals"
			if count == 1 {
				noun = "proposal"
			}
			title := fmt.Sprintf("%s: %d %s for a person's review", strings.TrimSuffix(name, ".md"), count, noun)
			if k := kinds[agent]; k != "" {
				title += " (" + k + ")"
			}
			if count == 0 {
				title = strings.TrimSuffix(name, ".md") + ": nothing to propose"
			}
			add(Event{Time: at, Agent: agent, Kind: EventCuratorPass, Title: title, Path: rel})
		}
	}
}
