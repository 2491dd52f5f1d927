package agents

// scanFactText runs the security scan of SPEC §2 ([ScanText]) over fact
// text, so a fact cannot carry what a memory entry may not.
func scanFactText(s string) error { return ScanText(s) }
