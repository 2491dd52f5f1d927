package agents

import "github.com/nexus-memory/nexus/internal/scan"

// scanFactText runs the security scan of SPEC §2 ([scan.In]) over fact
// text, so a fact cannot carry what a memory entry may not.
func scanFactText(s string) error { return scan.In(scan.PlaceFact, s) }
