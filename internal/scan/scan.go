// Package scan is the security scan of SPEC §2: it guards every text that
// reaches an agent's prompt — bounded memory, facts, review items, log
// entries, decisions and checkpoints. It lives in internal/ so that every
// domain package that writes such text (agents, livelog, retention) calls
// the same rules.
package scan

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/nexus-memory/nexus/internal/invisible"
)

// Rule names, as they appear in [Error.Rule] and in the
// "[BLOCKED: RULE ...]" line of the session-start render.
const (
	RulePromptInjection  = "prompt_injection"
	RuleRoleHijack       = "role_hijack"
	RuleAPIKey           = "api_key"
	RulePrivateKey       = "private_key"
	RuleToken            = "token"
	RulePassword         = "password"
	RuleExfiltration     = "exfiltration"
	RulePersistence      = "persistence"
	RuleInvisibleUnicode = "invisible_unicode"
)

// Place names where scanned text is going, so a refusal says why that
// place is guarded. The zero Place gives a message that fits anywhere.
type Place string

// The places Nexus scans text for.
const (
	PlaceMemory     Place = "memory"     // MEMORY.md / USER.md entries
	PlaceFact       Place = "fact"       // fact files and the memory index
	PlaceReview     Place = "review"     // review items (retain, staged memory writes, a person's edit)
	PlaceLog        Place = "log"        // live-log entries
	PlaceDecision   Place = "decision"   // decision records
	PlaceCheckpoint Place = "checkpoint" // work checkpoints
)

// why says, for each place, why its text must pass the scan.
var why = map[Place]string{
	"":              "Text stored here reaches agents' prompts, so it must not hold instructions to the model, secrets, or commands that leak or persist them",
	PlaceMemory:     "Memory is pasted into every session's prompt, so it must not hold instructions to the model, secrets, or commands that leak or persist them",
	PlaceFact:       "Facts are listed in the memory index at every session start and read back into prompts, so they must not hold instructions to the model, secrets, or commands that leak or persist them",
	PlaceReview:     "A review item becomes a fact or a memory entry once a person approves it, so it is held to the same scan: no instructions to the model, secrets, or commands that leak or persist them",
	PlaceLog:        "Every agent reads the shared log before it replies and a signed entry can never be removed, so it must not hold secrets, hidden characters or commands that leak them (instruction-like phrasing is kept but quarantined)",
	PlaceDecision:   "Decisions are shown to every agent at session start and the signed record can never be removed, so they must not hold secrets, hidden characters or commands that leak them (instruction-like phrasing is kept but quarantined)",
	PlaceCheckpoint: "A checkpoint is pasted into the prompt of the session that resumes the work, so it must not hold secrets, hidden characters or commands that leak them (instruction-like phrasing is kept but quarantined)",
}

// Error is returned by [Text] for text that hits a security rule.
// It wraps [ErrRefused] (vault.ErrRefused).
type Error struct {
	// Rule is the name of the first rule the text hit, one of the Rule...
	// constants.
	Rule string
	// Detail says what matched, in words safe to show: the rule's
	// description, or the code point of an invisible character. It never
	// repeats a matched secret.
	Detail string
	// Place is where the text was going; it picks the message's reason.
	Place Place
}

func (e *Error) Error() string {
	reason, ok := why[e.Place]
	if !ok {
		reason = why[""]
	}
	return fmt.Sprintf("refused by the security scan (rule %s): %s. %s; rewrite the text without it", e.Rule, e.Detail, reason)
}

// Unwrap makes an Error match [ErrRefused] (vault.ErrRefused).
func (e *Error) Unwrap() error { return ErrRefused }

// Quarantinable reports whether the rule hit is injection or role-hijack
// phrasing: text that may be kept as evidence where a record must not
// forget (log entries, decisions, checkpoints), shown to other agents only
// as a "[QUARANTINED: rule]" line. Secrets, exfiltration and invisible
// characters are never kept.
func (e *Error) Quarantinable() bool {
	return e.Rule == RulePromptInjection || e.Rule == RuleRoleHijack
}

// scanRule is one security rule: a pattern over folded text.
type scanRule struct {
	name, desc string
	need       []string // the text must contain one of these to match; a cheap filter before re
	re         *lazyRegexp
	// phrase rules match English phrasing; they are also tried on the
	// text with punctuation turned into spaces.
	phrase bool
	// prep, when set, rewrites the folded text before re is tried (to
	// drop harmless uses such as "ssh -i ~/.ssh/id_rsa").
	prep func(string) string
}

const keyFileDesc = "reads a private key or key folder (ssh, gpg, the vault's signing keys)"

// identityUse matches a key file named as an identity to use, not read:
// "ssh -i ~/.ssh/id_ed25519", "IdentityFile ~/.ssh/id_rsa",
// "ssh-keygen -f ~/.ssh/id_rsa".
var identityUse = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|\s)-i\s*\S*|\bidentityfile\s*=?\s*\S*|\bssh-(?:keygen|add|copy-id)\b[^\n|;&]*`)
})

// dropIdentityUse blanks key-file paths used as identities.
func dropIdentityUse(s string) string {
	return identityUse().ReplaceAllString(s, " ")
}

// scanFiller is a bounded run of words between the key words of a phrase.
const scanFiller = `(?:\S+\s+)`

// scanRules are matched against text that is NFKC-normalised and
// case-folded (see foldForScan), so every pattern is written in lower case.
// Patterns anchor on attack phrasing and secret shapes, not on bossy
// English: "you must run the tests" is a fine memory entry.
// Each is compiled the first time a text holds one of its needed literals
// (see lazyRegexp).
var scanRules = sync.OnceValue(newScanRules)

func newScanRules() []scanRule {
	type r struct{ name, desc, need, pat string }
	rules := []r{
		// Prompt injection: telling the model to drop what it was told.
		{RulePromptInjection, "asks the model to ignore or override its earlier instructions", "ignore|disregard|forget|override|bypass|skip",
			`\b(?:ignore|disregard|forget|override|bypass|skip)\s+` + scanFiller + `{0,3}(?:previous|prior|above|earlier|preceding|original|initial|system|developer)\s+` + scanFiller + `{0,2}(?:instructions?|prompts?|rules|guidelines|directives|messages|context)\b`},
		{RulePromptInjection, "asks the model to ignore or override its instructions", "ignore|disregard|forget|override|bypass",
			`\b(?:ignore|disregard|forget|override|bypass)\s+(?:all|any|your|every)\s+` + scanFiller + `{0,2}(?:instructions?|prompts?|directives|guidelines|safety\s+rules)\b`},
		{RulePromptInjection, "tries to replace or leak the system prompt", "prompt",
			`\b(?:system\s+prompt\s+override|new\s+system\s+prompt|(?:reveal|print|output|show|leak|repeat|dump)\s+` + scanFiller + `{0,3}(?:system|initial|hidden|original)\s+prompt)\b`},
		{RulePromptInjection, "asks the model to hide things from the user", "tell|inform|alert|notify|mention",
			`\b(?:do\s+not|don'?t|don’t|never)\s+` + scanFiller + `{0,4}(?:tell|inform|alert|notify|mention\s+(?:this\s+)?to)\s+` + scanFiller + `{0,2}(?:the\s+)?(?:user|human|operator|owner)\b`},
		{RulePromptInjection, "contains chat-template control markup", "<|[inst|[/inst",
			`<\|\s*(?:im_start|im_end|system|user|assistant|endoftext)\s*\|>|\[/?inst\]|<<\s*/?sys\s*>>|<\s*/?\s*(?:system|system-prompt|system_prompt)\s*>`},
		// Role hijack: telling the model it is someone else now.
		{RuleRoleHijack, "tries to give the model a new identity", "you",
			`\byou\s+are\s+` + scanFiller + `{0,2}(?:now|no\s+longer)\s+(?:a|an|the\s+(?:system|root|admin|administrator|superuser|developer|new|real|true|unrestricted|unfiltered|evil|ai|assistant|model|user)|called|named|not|root|admin|administrator|dan|unrestricted|unfiltered|jailbroken|evil|free\s+of)\b`},
		{RuleRoleHijack, "tries to give the model a new identity", "now|pretend|new",
			`\bfrom\s+now\s+on,?\s+(?:you\s+(?:are|will|must|shall|should)|act\s+as|behave\s+as)\b|\bpretend\s+` + scanFiller + `{0,2}(?:you\s+are|you're|to\s+be)\b|\byour\s+new\s+(?:role|identity|persona|instructions|name)\s+(?:is|are)\b`},
		{RuleRoleHijack, "tries to lift the model's restrictions", "act|behave|respond|answer|reply|mode|jailbr",
			`\b(?:act|behave)\s+as\s+(?:if|though)\s+` + scanFiller + `{0,4}(?:no|without)\s+` + scanFiller + `{0,2}(?:restrictions|limits|rules|filters|guidelines)\b|\b(?:respond|answer|reply)\s+without\s+` + scanFiller + `{0,2}(?:restrictions|limitations|filters|safety|censorship)\b|\b(?:developer|god|jailbreak|dan|unrestricted)\s+mode\b|\bjailbr(?:ea|o)k`},
		// Secrets.
		{RuleAPIKey, "looks like an API key", "sk-|akia|asia|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox|aiza|_live_|npm_|hf_",
			`\bsk-(?:proj-|ant-|live-|test-|or-)?[a-z0-9_-]{20,}|\b(?:akia|asia)[0-9a-z]{16}\b|\bgh[pousr]_[a-z0-9]{30,}|\bgithub_pat_[a-z0-9_]{30,}|\bglpat-[a-z0-9_-]{20,}|\bxox[abposr]-[a-z0-9-]{10,}|\baiza[0-9a-z_-]{35}|\b(?:sk|rk|pk)_live_[a-z0-9]{20,}|\bnpm_[a-z0-9]{36}|\bhf_[a-z0-9]{30,}`},
		{RuleAPIKey, "looks like an AWS secret access key", "secret_access_key",
			`secret_access_key\s*[:=]\s*["'` + "`" + `]?[a-z0-9/+]{30,}`},
		{RulePrivateKey, "contains a private key", "private|putty",
			`-----\s*begin\s+(?:[a-z0-9]+\s+){0,3}private\s+key(?:\s+block)?\s*-----|\bed25519-private:|\bputty-user-key-file`},
		{RuleToken, "looks like an access token", "bearer|eyj|key|secret|token",
			`\bbearer\s+[a-z0-9._~+/-]{20,}|\beyj[a-z0-9_-]{8,}\.eyj[a-z0-9_-]{8,}\.[a-z0-9_-]*|\b(?:api[_ -]?key|access[_ -]?key|secret[_ -]?key|client[_ -]?secret|auth[_ -]?token|access[_ -]?token|refresh[_ -]?token|token|secret)\s*[:=]\s*["'` + "`" + `]?[a-z0-9+/=_.-]{16,}`},
		{RulePassword, "contains a password", "pass|pwd|://",
			`\b(?:password|passwd|passphrase|pwd)\s*[:=]\s*(?:"[^"\n]+"|'[^'\n]+'|[^\s"']{4,})|\b[a-z][a-z0-9+.-]*://[^\s/:@]+:[^\s/@]+@`},
		// Exfiltration and persistence.
		{RuleExfiltration, "sends a secret variable over the network", "$",
			`\b(?:curl|wget|nc|ncat|invoke-webrequest|iwr|invoke-restmethod|irm|httpie|http)\b[^\n]*\$\{?[a-z0-9_]*(?:key|token|secret|password|passwd|credentials?)s?\b`},
		{RuleExfiltration, "reads a credentials file", ".env|.netrc|.pgpass|.npmrc|.pypirc|.git-credentials|.aws/credentials",
			`\b(?:cat|less|more|head|tail|grep|source|type|base64|xxd|strings|cp|scp|rsync|curl|wget|open|read|print|dump|upload|send)\b[^\n]*(?:\.env(?:$|[^a-z0-9_.-]|\.(?:local|prod|production|dev|development)\b)|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|\.git-credentials\b|\.aws/credentials\b)`},
		{RuleExfiltration, keyFileDesc, "id_|.ssh|.gnupg|.nexus/keys|/etc/shadow|.kube/config|.docker/config|gh/hosts",
			`\b(?:cat|less|more|head|tail|tac|nl|base64|xxd|od|hexdump|strings|scp|rsync|tar|zip|7z|curl|wget|nc|ncat|socat|upload|send|print|dump|read|type|get-content|gc|copy|exfil\w*|paste|post|leak)\b[^\n]*(?:\bid_(?:rsa|dsa|ecdsa|ed25519)(?:_sk)?(?:$|[^a-z0-9_.-]|\.(?:$|[^p]|p(?:$|[^u])|pu(?:$|[^b])))|\.ssh/(?:$|[\s*"'` + "`" + `)|;&]|[^\s/]*private)|\.ssh(?:$|[\s"'` + "`" + `)|;&])|\.gnupg\b|\.nexus/keys\b|/etc/shadow\b|\.kube/config\b|\.docker/config\.json\b|\.config/gh/hosts\.yml\b)`},
		{RuleExfiltration, "sends a file's or the environment's contents over the network", "$(|`|env|set",
			`\b(?:curl|wget|nc|ncat|socat|httpie|http|invoke-webrequest|iwr|invoke-restmethod|irm)\b[^\n]*(?:\$\(|` + "`" + `)\s*(?:cat|head|tail|tac|base64|xxd|less|more|env|printenv|set|type|get-content|gc)\b|\b(?:env|printenv|set)\s*\|\s*(?:curl|wget|nc|ncat|socat|base64)\b`},
		{RuleExfiltration, "mentions exfiltration", "exfiltrat",
			`\bexfiltrat`},
		{RulePersistence, "touches ssh authorized_keys", "authorized_keys",
			`authorized_keys`},
		{RulePersistence, "installs a persistent hook", ">|crontab",
			`>>?\s*["']?(?:~|\$home|\$\{home\})?[a-z0-9_./-]*/?\.(?:bashrc|zshrc|bash_profile|profile|zprofile)\b|\bcrontab\s+-e\b|\|\s*crontab\b`},
	}
	preps := map[string]func(string) string{keyFileDesc: dropIdentityUse}
	out := make([]scanRule, len(rules))
	for i, x := range rules {
		out[i] = scanRule{name: x.name, desc: x.desc, need: strings.Split(x.need, "|"), re: &lazyRegexp{pat: x.pat}, prep: preps[x.desc],
			phrase: (x.name == RulePromptInjection || x.name == RuleRoleHijack) && !strings.Contains(x.pat, `<\|`)}
	}
	return out
}

// lazyRegexp is a pattern compiled on its first use. Text that holds none
// of a rule's needed literals — most text, for most rules — never pays for
// compiling it: compiling all twenty patterns took 4 ms, most of what a
// cheap command (a log append, a prompt) spends of its own
// (docs/benchmarks.md, "Issue 33: start-up"). It is safe for concurrent
// use.
type lazyRegexp struct {
	pat  string
	once sync.Once
	re   *regexp.Regexp // set by once
}

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pat) })
	return l.re
}

// orderedRules are scanRules with every rule whose hit refuses the write
// everywhere before the quarantinable ones.
var orderedRules = sync.OnceValue(func() []scanRule { return refusingFirst(scanRules()) })

func refusingFirst(rules []scanRule) []scanRule {
	var refusing, quarantinable []scanRule
	for _, r := range rules {
		if (&Error{Rule: r.name}).Quarantinable() {
			quarantinable = append(quarantinable, r)
		} else {
			refusing = append(refusing, r)
		}
	}
	return append(refusing, quarantinable...)
}

// needleSet finds, in one pass over a text, which of orderedRules' needed
// literals it holds. Trying each rule's literals with strings.Contains
// read every text some eighty times: that was over half of reading a
// whole log (every entry shown is scanned).
type needleSet struct {
	one   [256]uint64     // rules needing this byte alone
	two   [1 << 16]uint16 // the first two bytes of longer literals -> index in lists (0: none)
	lists [][]needle
}

type needle struct {
	text string
	bit  uint64 // the rule's bit, 1<<(index in orderedRules)
}

// needles is the needleSet of orderedRules, or nil if there are more rules
// than bits (then each rule is tried in turn).
var needles = sync.OnceValue(func() *needleSet {
	rules := orderedRules()
	if len(rules) > 64 {
		return nil
	}
	ns := &needleSet{lists: [][]needle{nil}}
	for i, r := range rules {
		for _, n := range r.need {
			bit := uint64(1) << i
			if len(n) == 1 {
				ns.one[n[0]] |= bit
				continue
			}
			k := uint16(n[0])<<8 | uint16(n[1])
			if ns.two[k] == 0 {
				ns.two[k] = uint16(len(ns.lists))
				ns.lists = append(ns.lists, nil)
			}
			ns.lists[ns.two[k]] = append(ns.lists[ns.two[k]], needle{text: n, bit: bit})
		}
	}
	return ns
})

// rulesThatMayMatch returns the bits of the orderedRules whose needed
// literals folded holds (see [scanRule.mayMatch]).
func (ns *needleSet) rulesThatMayMatch(folded string) uint64 {
	var mask uint64
	for i := 0; i < len(folded); i++ {
		c := folded[i]
		mask |= ns.one[c]
		if i+1 == len(folded) {
			break
		}
		k := ns.two[uint16(c)<<8|uint16(folded[i+1])]
		if k == 0 {
			continue
		}
		for _, n := range ns.lists[k] {
			if mask&n.bit == 0 && strings.HasPrefix(folded[i:], n.text) {
				mask |= n.bit
			}
		}
	}
	return mask
}

// mayMatch reports whether folded holds one of the rule's needed literals.
func (r *scanRule) mayMatch(folded string) bool {
	for _, n := range r.need {
		if strings.Contains(folded, n) {
			return true
		}
	}
	return false
}

// isInvisibleRune reports whether r is an invisible or bidirectional-control
// code point that can hide text from a person reading the file.
func isInvisibleRune(r rune) bool {
	switch {
	case r >= 0x200B && r <= 0x200F, // zero-width space, non-joiner, joiner; LRM, RLM
		r == 0x061C,                  // Arabic letter mark
		r >= 0xE0100 && r <= 0xE01EF, // variation selectors supplement (bytes smuggled as selectors)
		r >= 0x2060 && r <= 0x2064,   // word joiner, invisible operators
		r == 0xFEFF,                  // zero-width no-break space (BOM)
		r >= 0x202A && r <= 0x202E,   // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069,   // bidi isolates
		r >= 0xE0000 && r <= 0xE007F: // tag characters ("ASCII smuggling")
		return true
	}
	return false
}

// foldForScan returns s NFKC-normalised and case-folded, so that
// full-width letters, ligatures and case do not slip past the rules.
func foldForScan(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s) // NFKC is the identity on ASCII
	}
	s = norm.NFKC.String(s)
	// A Caser keeps state; make one per call so scans may run concurrently.
	s = cases.Fold().String(s)
	return norm.NFKC.String(s)
}

// Text runs the security scan over text that is about to reach an agent's
// prompt. It returns nil, or an [*Error] naming the first rule hit, which
// wraps [ErrRefused] (vault.ErrRefused).
//
// It looks for prompt-injection and role-hijack phrasing, secret and
// credential shapes (API keys, private keys, tokens, passwords),
// exfiltration and persistence commands, and invisible or
// bidirectional-control Unicode. Phrases are matched on NFKC-folded,
// case-folded text. Text is safe for concurrent use.
func Text(s string) error { return In("", s) }

// In is [Text] for text bound for place: a refusal's message says why
// that place is guarded.
func In(place Place, s string) error {
	if err := scan(s); err != nil {
		err.Place = place
		return err
	}
	return nil
}

func scan(s string) *Error {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	// No invisible code point is ASCII, and NFKC is the identity on it:
	// most text is folded by lower-casing alone.
	folded := ""
	if ascii {
		folded = strings.ToLower(s)
	} else {
		for _, r := range s {
			if isInvisibleRune(r) {
				return &Error{Rule: RuleInvisibleUnicode, Detail: fmt.Sprintf("contains the invisible or bidirectional-control character U+%04X", r)}
			}
		}
		// The invisible code points left (a soft hyphen, a variation
		// selector after an emoji) are harmless alone but must not split
		// a phrase or a secret: "ig\u00adnore previous instructions" is
		// read as it looks.
		folded = foldForScan(invisible.Drop(s))
	}
	// Refusing rules (secrets, exfiltration, persistence) are tried before
	// the quarantinable ones (injection, role hijack): text holding both
	// must be refused, not kept as quarantined evidence with a secret in it.
	return firstHit(orderedRules(), folded, needles())
}

// firstHit returns the first of rules that folded text hits, or nil. ns,
// when not nil, is the needleSet of rules: it says in one pass which rules
// may match; without it each rule's literals are tried in turn.
func firstHit(rules []scanRule, folded string, ns *needleSet) *Error {
	words := "" // folded with punctuation turned into spaces, made on first need
	var may uint64
	if ns != nil {
		may = ns.rulesThatMayMatch(folded)
	}
	for i, rule := range rules {
		if ns != nil && may&(1<<i) == 0 || ns == nil && !rule.mayMatch(folded) {
			continue
		}
		subject := folded
		if rule.prep != nil {
			subject = rule.prep(folded)
		}
		if rule.re.get().MatchString(subject) {
			return &Error{Rule: rule.name, Detail: rule.desc}
		}
		if rule.phrase {
			// "**Ignore** all previous-instructions" is the same phrase.
			if words == "" {
				words = wordsOnly(folded)
			}
			if rule.re.get().MatchString(words) {
				return &Error{Rule: rule.name, Detail: rule.desc}
			}
		}
	}
	return nil
}

// wordsOnly replaces every run of characters other than letters, digits
// and apostrophes with one space.
func wordsOnly(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
			continue
		}
		space = true
	}
	return b.String()
}

// RuleOf returns the name of the rule s hits, or "".
func RuleOf(s string) string {
	if err := scan(s); err != nil {
		return err.Rule
	}
	return ""
}
