package livelog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/internal/scan"
	"github.com/nexus-memory/nexus/vault"
)

// quarantineCheck runs the security scan (SPEC §2) over the named text
// fields (name, value pairs) of an entry about to be written. Secrets,
// exfiltration, persistence and invisible characters refuse the write
// (the error wraps vault.ErrRefused; nothing is written). Injection or
// role-hijack phrasing is written, as evidence, and the entry is marked
// quarantined with the rule: other agents see only a "[QUARANTINED: rule]"
// line until a person clears it.
// place picks the refusal's reason (scan.PlaceLog, PlaceDecision...).
func quarantineCheck(e *Entry, place scan.Place, fields ...string) error {
	rule, err := quarantineRule(place, fields...)
	if err == nil && e.Quarantine == "" {
		e.Quarantine = rule
	}
	return err
}

// quarantineRule scans the named fields (name, value pairs) for place: an
// error for a hit that refuses the write, else the quarantinable rule the
// first field hit ("" when all are clean). Every field is scanned, so a
// secret after an injection is still refused.
func quarantineRule(place scan.Place, fields ...string) (string, error) {
	rule := ""
	for i := 0; i+1 < len(fields); i += 2 {
		name, value := fields[i], fields[i+1]
		if value == "" {
			continue
		}
		err := scan.In(place, value)
		var se *scan.Error
		// The scan tries every refusing rule before the quarantinable
		// ones: a quarantinable hit holds no secret.
		if errors.As(err, &se) && se.Quarantinable() {
			if rule == "" {
				rule = se.Rule
			}
			continue
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
	}
	return rule, nil
}

// ClearedDir holds people's clearings of quarantined entries, one file
// per device (log/cleared/DEVICE.md), each line "- HASH WRITER#SEQ by
// NAME at TIME". The files are synced like the log; Nexus reads them and
// never clears an entry for an agent.
const ClearedDir = "log/cleared"

type clearedSet map[string]bool

// cleared loads every clearing. A missing folder clears nothing.
func (l *Log) cleared() clearedSet {
	set := clearedSet{}
	des, err := vault.ReadDir(l.abs(ClearedDir))
	if err != nil {
		return set
	}
	for _, de := range des {
		if !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".md") {
			continue
		}
		data, err := vault.ReadFile(l.abs(ClearedDir + "/" + de.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "- "))
			if len(f) > 0 {
				if _, ok := parseHash(f[0]); ok {
					set[f[0]] = true
				}
			}
		}
	}
	return set
}

// apply marks e as it is shown: a quarantined entry a person cleared is
// shown as written; unsigned text is scanned as it is read (nobody
// scanned it before it was written).
func (cl clearedSet) apply(e *Entry) {
	if e.Signed && e.Quarantine != "" && cl[e.Hash] {
		e.Quarantine, e.cleared = "", true
	}
	if !e.Signed && e.Quarantine == "" {
		if r := scan.RuleOf(e.Summary + "\n" + e.Body); r != "" {
			e.Quarantine = r
		}
	}
}

// QuarantineNotice is what a prompt shows instead of a quarantined
// entry's text.
func QuarantineNotice(e *Entry) string {
	where := e.Segment
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return "[QUARANTINED: " + e.Quarantine + "] (see " + where + ", nexus log read --raw)"
}

// Clear records that person cleared the quarantine of the entry whose
// chain hash is hash, in log/cleared/DEVICE.md. It is a person's action:
// the CLI offers it, no MCP tool does.
func (l *Log) Clear(hash, person string) error {
	if _, ok := parseHash(hash); !ok {
		return fmt.Errorf("%q is not an entry hash (43 characters, from 'nexus log read --raw --json'): %w", hash, vault.ErrInvalid)
	}
	if err := vault.CheckText("name", person, 64); err != nil || strings.ContainsAny(person, " \t\r\n") {
		return fmt.Errorf("the person clearing must be named with one word: %w", vault.ErrInvalid)
	}
	device, err := l.v.CheckMachine()
	if err != nil {
		return err
	}
	rel := ClearedDir + "/" + device + ".md"
	unlock, err := l.v.Lock("livelog-cleared")
	if err != nil {
		return err
	}
	defer unlock()
	path := l.abs(rel)
	if err := vault.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := vault.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	st, _ := f.Stat()
	line := ""
	if st != nil && st.Size() == 0 {
		line = "# Quarantined log entries cleared by a person\n\n"
	}
	line += "- " + hash + " by " + person + " at " + l.opts.Now().UTC().Format(time.RFC3339) + "\n"
	if _, err := f.WriteString(line); err != nil {
		return err
	}
	return f.Sync()
}

// Masked returns e as prompts and readers that did not ask for the raw
// text see it: a quarantined entry's summary is the "[QUARANTINED: rule]"
// notice and its body is empty. The text is scanned again as it is shown
// ([Entry.readScan]), so a signed entry the scan of its day let through
// (a rule added since) is withheld too.
func (e Entry) Masked() Entry {
	e.readScan()
	if e.Quarantine != "" {
		e.Summary, e.Body = QuarantineNotice(&e), ""
	}
	return e
}

// readScan scans e's text as it is shown (SPEC §2: at read time as well as
// at write time) and marks it quarantined with the rule it hits: a signed
// entry written before a rule existed, or by a writer that skipped the
// scan, is withheld like one quarantined when it was written. A person's
// clearing lifts injection phrasing only: a secret is withheld whatever
// was cleared. Only the entries a door returns are scanned.
func (e *Entry) readScan() {
	if e.Quarantine != "" {
		return
	}
	rule := scan.RuleOf(e.Summary + "\n" + e.Body)
	if rule == "" || (e.cleared && (&scan.Error{Rule: rule}).Quarantinable()) {
		return
	}
	e.Quarantine = rule
}
