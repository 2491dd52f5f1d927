package agents

import "github.com/nexus-memory/nexus/internal/scan"

// The security scan lives in internal/scan, shared with livelog and
// retention; these names keep the agents API as it was.

// Scan rule names, as they appear in [ScanError.Rule] and in the
// "[BLOCKED: RULE ...]" line of the session-start render.
const (
	RulePromptInjection  = scan.RulePromptInjection
	RuleRoleHijack       = scan.RuleRoleHijack
	RuleAPIKey           = scan.RuleAPIKey
	RulePrivateKey       = scan.RulePrivateKey
	RuleToken            = scan.RuleToken
	RulePassword         = scan.RulePassword
	RuleExfiltration     = scan.RuleExfiltration
	RulePersistence      = scan.RulePersistence
	RuleInvisibleUnicode = scan.RuleInvisibleUnicode
)

// ScanError is returned by [ScanText] for text that hits a security rule.
// It wraps [vault.ErrRefused].
type ScanError = scan.Error

// ScanText runs the security scan of SPEC §2 ([scan.In] for memory) over text that
// is about to enter an agent's bounded memory or facts.
func ScanText(s string) error { return scan.In(scan.PlaceMemory, s) }
