package doctor

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/livelog"
	"github.com/nexus-memory/nexus/vault"
)

// The checks that read the log's feeds for signs of how the vault travels
// between machines (SPEC §11): forks, cited entries that never arrived, a
// private key that was synced, one device name used by two machines.

// verifyLog verifies the log once for every check that needs it. skip is
// set (and the report nil) when a lock the log needs is held by a hung
// process.
func (c *checker) verifyLog(ctx context.Context) (rep *livelog.Report, skip string, err error) {
	if c.verified != nil || c.verifyErr != nil {
		return c.verified, "", c.verifyErr
	}
	for name := range c.stuck {
		if strings.HasPrefix(name, "livelog") {
			return nil, "skipped (the log's lock " + name + " is held: see locks)", nil
		}
	}
	l, err := c.liveLog()
	if err != nil {
		return nil, "", err
	}
	// Verify takes the witness lock for an instant; a hung holder of it
	// was found by the locks check, which ran first (see above). No time
	// limit: a million entries take half a minute on two loaded cores.
	c.verified, c.verifyErr = l.Verify(ctx)
	return c.verified, "", c.verifyErr
}

func (c *checker) liveLog() (*livelog.Log, error) {
	if c.ll == nil {
		l, err := livelog.Open(c.v, livelog.Options{Logger: c.opts.Logger})
		if err != nil {
			return nil, err
		}
		c.ll = l
	}
	return c.ll, nil
}

// feedsHere describes the feeds for the key and device checks, once.
func (c *checker) feedsHere(ctx context.Context) ([]livelog.FeedHere, error) {
	if c.here != nil {
		return c.here, nil
	}
	l, err := c.liveLog()
	if err != nil {
		return nil, err
	}
	c.here, err = l.FeedsHere(ctx)
	return c.here, err
}

// forks reports feeds with two branches: two different entries of one
// writer with the same number, which only one agent appending on two
// machines under one device name produces. One finding per feed.
func (c *checker) forks(ctx context.Context) (string, []Finding, error) {
	rep, skip, err := c.verifyLog(ctx)
	if skip != "" || err != nil {
		return skip, nil, err
	}
	type fork struct {
		seqs  map[int64]bool
		where []string
		file  string
	}
	byWriter := map[string]*fork{}
	for _, f := range rep.Findings {
		if f.Status != livelog.StatusForked {
			continue
		}
		fk := byWriter[f.Writer]
		if fk == nil {
			fk = &fork{seqs: map[int64]bool{}, file: f.File}
			byWriter[f.Writer] = fk
		}
		fk.seqs[f.Seq] = true
		fk.where = append(fk.where, fmt.Sprintf("%s:%d", f.File, f.Line))
	}
	writers := sortedKeys(byWriter)
	var findings []Finding
	for _, w := range writers {
		fk := byWriter[w]
		where := fk.where
		if len(where) > 4 {
			where = append(where[:4:4], fmt.Sprintf("%d more", len(fk.where)-4))
		}
		f := Finding{
			Path: fk.file,
			Problem: fmt.Sprintf("the feed of %s has two branches: entries %s exist twice with different content (%s); %s appended on two machines that both call themselves %q. Both branches are kept and read",
				w, seqList(fk.seqs), strings.Join(where, ", "), livelog.WriterAgent(w), livelog.WriterDevice(w)),
			Fix: "on one of the two machines, give it a name of its own: nexus device name NAME (nothing to delete; new entries there go to a new feed); details: " + c.cmd("log", "verify"),
		}
		if c.deviceSettled(livelog.WriterDevice(w)) { // devices.go
			f.Severity = SeverityNote
			f.Problem += "; one of the two machines has a name of its own since, so the fork no longer grows"
			f.Fix = "nothing: both branches stay, are read and verify"
		}
		findings = append(findings, f)
	}
	return fmt.Sprintf("%s checked for forks", plural(len(feedWriters(rep)), "feed", "feeds")), findings, nil
}

// cites reports entries that other feeds cite but that are not on this
// machine. Until this machine has seen the cited feed reach the entry it
// is "not here yet" — a sync tool still copying — and a note; when the
// first entry citing it is older than Options.CiteAge (a day) it is a
// problem: the entry never arrived. (Cited entries this machine saw and
// lost are "removed", a problem of the log check.)
func (c *checker) cites(ctx context.Context) (string, []Finding, error) {
	rep, skip, err := c.verifyLog(ctx)
	if skip != "" || err != nil {
		return skip, nil, err
	}
	type missing struct {
		cited   livelog.Cite
		by      map[string]bool
		n       int
		first   time.Time
		file    string
		line    int
		highest int64
	}
	byFeed := map[string]*missing{}
	for _, f := range rep.Findings {
		if f.Status != livelog.StatusNotHereYet || f.Cited == nil {
			continue
		}
		m := byFeed[f.Cited.Writer]
		if m == nil {
			m = &missing{cited: *f.Cited, by: map[string]bool{}, first: f.Time, file: f.File, line: f.Line}
			byFeed[f.Cited.Writer] = m
		}
		m.by[f.Writer] = true
		m.n++
		m.highest = max(m.highest, f.Cited.Seq)
		if f.Time.Before(m.first) {
			m.first, m.file, m.line = f.Time, f.File, f.Line
		}
	}
	now := c.opts.Now()
	var findings []Finding
	for _, w := range sortedKeys(byFeed) {
		m := byFeed[w]
		age := now.Sub(m.first)
		what := fmt.Sprintf("%s up to #%d, cited by %s of %s (the first %s, %s:%d)",
			w, m.highest, plural(m.n, "entry", "entries"), strings.Join(sortedKeys(m.by), ", "), ago(age), m.file, m.line)
		f := Finding{Path: m.file}
		if age <= c.opts.CiteAge {
			f.Severity = SeverityNote
			f.Problem = what + ", has not reached this machine yet: a sync tool is probably still copying it"
			f.Fix = "nothing, if it arrives soon; if it has not within a day, check that the sync tool runs on the machine " + w + " writes from and carries log/live/ (" + c.cmd("log", "feeds") + " shows each feed's head here)"
		} else {
			f.Problem = what + ", never arrived on this machine: the feed " + w + " stops before it here"
			f.Fix = "check that the sync tool runs on the machine " + w + " writes from and carries log/live/ (not excluded, no error on that folder); " + c.cmd("log", "feeds") + " shows how far each feed reached here"
		}
		findings = append(findings, f)
	}
	summary := "every entry another feed cites is here"
	if len(findings) > 0 {
		summary = plural(len(findings), "feed is", "feeds are") + " cited beyond what is here"
	}
	return summary, findings, nil
}

// ago renders a duration for a person: "40s ago", "5h ago", "3 days ago".
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + "h ago"
	}
	return strconv.Itoa(int(d/(24*time.Hour))) + " days ago"
}

// agentKeys is what doctor knows of one agent's keys.
type agentKeys struct {
	name  string
	id    *identity.Identity // nil if IDENTITY.md does not load
	local ed25519.PublicKey  // this machine's key, nil if none
}

func (c *checker) agentKeys() ([]agentKeys, error) {
	names, err := identity.List(c.v)
	if err != nil {
		return nil, err
	}
	var out []agentKeys
	for _, n := range names {
		ak := agentKeys{name: n}
		if id, err := identity.Load(c.v, n); id != nil && (err == nil || errors.Is(err, identity.ErrKey)) {
			ak.id = id
		}
		if s, err := identity.LoadSigner(c.v, n); err == nil {
			ak.local = s.PublicKey()
		}
		out = append(out, ak)
	}
	return out, nil
}

// signedBy reports whether pub made e's signature, under the one rule
// log verify applies too ([identity.VerifySignature]), so doctor and
// verify never disagree on a signature.
func signedBy(e *livelog.Entry, pub ed25519.PublicKey) bool {
	msg, sig, ok := livelog.EntrySignature(e)
	return ok && identity.VerifySignature(pub, msg, sig)
}

// syncedKeys reports private keys that travelled to another machine or
// sit where sync tools carry them: this machine's key listed in
// IDENTITY.md for another device, or signing another device's feed; a
// conflict copy of a key file (a sync tool is copying .nexus/keys/); a key
// file elsewhere in the vault; key files that git tracks.
func (c *checker) syncedKeys(ctx context.Context) (string, []Finding, error) {
	device, err := c.v.Device()
	if err != nil {
		return "", nil, err
	}
	aks, err := c.agentKeys()
	if err != nil {
		return "", nil, err
	}
	feeds, err := c.feedsHere(ctx)
	if err != nil {
		return "", nil, err
	}
	own, err := c.ownDevices()
	if err != nil {
		return "", nil, err
	}
	here := map[string]bool{} // writers this machine appended as
	for _, fh := range feeds {
		if fh.AppendedHere {
			here[fh.Writer] = true
		}
	}
	var findings []Finding
	moveKey := func(n string) string {
		key := Quote(c.abs(identity.KeyPath(n)))
		return "on this machine, move the copy out of the vault and make a key of this machine's own: mv " + key + " BACKUP/ && " + c.cmd("agent", "new-key", n) +
			" (it lists the new key in IDENTITY.md; entries already signed still verify); then keep .nexus/keys/ out of sync (" + c.cmd("doctor", "--fix") + " writes the ignore rules). Treat the old key as known to whoever had the copy"
	}
	for _, ak := range aks {
		if ak.local == nil || ak.id == nil {
			continue
		}
		// Listed for another device.
		var others []string
		for _, dk := range ak.id.DeviceKeys {
			if dk.Device != "" && !own[dk.Device] && bytes.Equal(dk.Key, ak.local) && !here[ak.name+"@"+dk.Device] && !contains(others, dk.Device) {
				others = append(others, dk.Device)
			}
		}
		// Signing another device's feed.
		var signs []string
		for _, fh := range feeds {
			d := livelog.WriterDevice(fh.Writer)
			if livelog.WriterAgent(fh.Writer) != ak.name || own[d] || fh.AppendedHere || contains(others, d) {
				continue
			}
			if h := fh.Head(); h != nil && signedBy(h, ak.local) {
				signs = append(signs, fmt.Sprintf("%s (its newest entry, #%d)", fh.Writer, h.Seq))
			}
		}
		if len(others) == 0 && len(signs) == 0 {
			continue
		}
		var why []string
		if len(others) > 0 {
			sort.Strings(others)
			why = append(why, "IDENTITY.md lists it as the key of device "+strings.Join(others, ", "))
		}
		if len(signs) > 0 {
			why = append(why, "it signed "+strings.Join(signs, ", "))
		}
		findings = append(findings, Finding{
			Path:    identity.KeyPath(ak.name),
			Problem: fmt.Sprintf("the private key of %s on this machine (device %q) is also used on another machine: %s. Keys never travel on their own: the key file was synced or copied, so either machine can sign as the other", ak.name, device, strings.Join(why, "; ")),
			Fix:     moveKey(ak.name),
		})
	}
	// Key files where sync tools carry them.
	strays, err := c.strayKeyFiles(ctx)
	if err != nil {
		return "", findings, err
	}
	for _, p := range strays {
		rel := c.rel(p)
		f := Finding{Path: rel}
		if strings.HasPrefix(rel, vault.KeysDir+"/") {
			f.Problem = "a sync tool's conflict copy of a private key: something is syncing .nexus/keys/, which must stay on each machine"
			f.Fix = "delete the copy (rm " + Quote(p) + ") and keep .nexus/keys/ out of sync (" + c.cmd("doctor", "--fix") + " writes the ignore rules); treat the key as known to every machine the folder reached"
		} else {
			f.Problem = "a private signing key (ed25519-private:) outside .nexus/keys/, where sync tools and backups of notes carry it"
			f.Fix = "move it out of the vault (mv " + Quote(p) + " BACKUP/); an agent's key belongs only in .nexus/keys/ on its own machine"
		}
		findings = append(findings, f)
	}
	tracked, err := c.gitTrackedKeys(ctx)
	if err != nil {
		c.opts.Logger.Debug("doctor: git ls-files", "err", err)
	}
	for _, rel := range tracked {
		findings = append(findings, Finding{
			Path:    rel,
			Problem: "git tracks this private key: every clone and push carries it to other machines",
			Fix:     "git -C " + Quote(c.root) + " rm --cached " + Quote(rel) + " && " + c.cmd("doctor", "--fix") + " (ignore rules); it stays in the history, so treat it as known to everyone with the repository and " + strings.TrimPrefix(moveKey(strings.TrimSuffix(filepath.Base(rel), ".key")), "on this machine, "),
		})
	}
	return fmt.Sprintf("%s checked against IDENTITY.md and the feeds; key files looked for where sync tools carry them", plural(len(aks), "agent's key", "agents' keys")), findings, nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// strayKeyFiles finds private key files that are not an agent's key in
// .nexus/keys/: conflict copies inside it, and *.key files holding a
// private key anywhere else in the vault (outside .git and the index).
func (c *checker) strayKeyFiles(ctx context.Context) ([]string, error) {
	var out []string
	keysDir := c.abs(vault.KeysDir)
	err := filepath.WalkDir(c.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == c.root {
				return err
			}
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		name := d.Name()
		if d.IsDir() {
			if name == ".git" || path == c.abs(vault.IndexDir) || path == c.abs(vault.StateDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.Contains(strings.ToLower(name), ".key") {
			return nil
		}
		if filepath.Dir(path) == keysDir {
			if n, ok := strings.CutSuffix(name, ".key"); ok && identity.ValidName(n) == nil {
				return nil // an agent's key: the key checks
			}
			if _, _, conflict := vault.ParseConflictName(name); !conflict {
				return nil // an odd name: the key-pair check
			}
		}
		if isPrivateKeyFile(path) {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func isPrivateKeyFile(path string) bool {
	f, err := vault.OpenRead(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 64)
	n, _ := f.Read(head)
	return bytes.HasPrefix(bytes.TrimSpace(head[:n]), []byte("ed25519-private:"))
}

// gitTrackedKeys lists the files under .nexus/keys/ that git tracks, when
// the vault is in a git work tree and git is installed.
func (c *checker) gitTrackedKeys(ctx context.Context) ([]string, error) {
	if !insideGit(c.root) {
		return nil, nil
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "-C", c.root, "ls-files", "-z", "--", vault.KeysDir)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var rels []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			rels = append(rels, vault.KeysDir+"/"+filepath.Base(p))
		}
	}
	return rels, nil
}

func insideGit(dir string) bool {
	for d := dir; ; {
		if _, err := vault.Stat(filepath.Join(d, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return false
		}
		d = parent
	}
}

// deviceNames reports one device name used by two machines. Evidence:
// entries of this machine's own feeds numbered above its last append
// there (another machine appended under its name), and two keys of one
// agent listed for one device name whose signatures take turns in the
// feed (two machines signing as one writer). A fork (forks check) is the
// third sign.
func (c *checker) deviceNames(ctx context.Context) (string, []Finding, error) {
	device, err := c.v.Device()
	if err != nil {
		return "", nil, err
	}
	feeds, err := c.feedsHere(ctx)
	if err != nil {
		return "", nil, err
	}
	aks, err := c.agentKeys()
	if err != nil {
		return "", nil, err
	}
	rename := "on the other machine, give it a name of its own: nexus device name NAME (entries already written are kept and verify; new ones go to that machine's own feed)"
	var findings []Finding
	byWriter := map[string]*livelog.FeedHere{}
	for i := range feeds {
		fh := &feeds[i]
		byWriter[fh.Writer] = fh
		if !fh.AppendedHere || fh.NotHereCount == 0 || c.deviceSettled(livelog.WriterDevice(fh.Writer)) {
			continue // settled: one of the machines has a name of its own since (devices.go)
		}
		first, last := fh.NotHere[0], fh.NotHere[len(fh.NotHere)-1]
		findings = append(findings, Finding{
			Path: first.Segment,
			Problem: fmt.Sprintf("%s of %s (#%d%s, from %s) were not appended by this machine, whose last append to that feed was #%d: another machine appends under the device name %q",
				plural(fh.NotHereCount, "entry", "entries"), fh.Writer, first.Seq, rangeEnd(first.Seq, last.Seq, fh.NotHereCount > len(fh.NotHere)), first.Time.Format(time.RFC3339), fh.LastHere, livelog.WriterDevice(fh.Writer)),
			Fix: rename,
		})
	}
	for _, ak := range aks {
		if ak.id == nil {
			continue
		}
		keysOf := map[string][]ed25519.PublicKey{}
		for _, dk := range ak.id.DeviceKeys {
			if dk.Device == "" {
				continue
			}
			dup := false
			for _, k := range keysOf[dk.Device] {
				dup = dup || bytes.Equal(k, dk.Key)
			}
			if !dup {
				keysOf[dk.Device] = append(keysOf[dk.Device], dk.Key)
			}
		}
		for _, d := range sortedKeys(keysOf) {
			keys := keysOf[d]
			if len(keys) < 2 {
				continue
			}
			w := ak.name + "@" + d
			f := Finding{Path: identity.IdentityPath(ak.name)}
			turns, newest := signerTurns(byWriter[w], keys)
			switch {
			case turns > 1 && c.deviceSettled(d): // devices.go
				f.Severity = SeverityNote
				f.Problem = fmt.Sprintf("IDENTITY.md of %s lists %d keys for device %q: two machines signed as %s until one of them took a name of its own",
					ak.name, len(keys), d, w)
				f.Fix = "nothing: the entries of both keep verifying"
			case turns > 1:
				f.Problem = fmt.Sprintf("IDENTITY.md of %s lists %d keys for device %q and the newest entries of %s take turns between them (%d changes of key): two machines sign as %s",
					ak.name, len(keys), d, w, turns, w)
				f.Fix = rename
			case d == device && ak.local != nil && newest != nil && !bytes.Equal(newest, ak.local) && !bytes.Equal(keys[len(keys)-1], ak.local):
				// (This machine's key listed last, newest of all, with
				// no entry signed yet: a key replaced here, 'nexus agent
				// new-key', before its first append. The note below.)
				f.Problem = fmt.Sprintf("IDENTITY.md of %s lists %d keys for device %q, this machine's name, and the newest entry of %s was signed with a key that is not this machine's: another machine writes as %s",
					ak.name, len(keys), d, w, w)
				f.Fix = rename
			default:
				f.Severity = SeverityNote
				f.Problem = fmt.Sprintf("IDENTITY.md of %s lists %d keys for device %q: the key was replaced on that machine, or a second machine once used the name %q",
					ak.name, len(keys), d, d)
				f.Fix = "nothing, if the key was replaced; if two machines use the name, " + rename
			}
			findings = append(findings, f)
		}
	}
	return fmt.Sprintf("this machine is %q; %s checked for a second machine with the same name", device, plural(len(feeds), "feed", "feeds")), findings, nil
}

// signerTurns attributes the feed's recent entries to keys and counts how
// often the signing key changes from one entry to the next; newest is the
// key of the newest attributed entry.
func signerTurns(fh *livelog.FeedHere, keys []ed25519.PublicKey) (turns int, newest ed25519.PublicKey) {
	if fh == nil {
		return 0, nil
	}
	last := -1
	for i := range fh.Recent {
		for k, pub := range keys {
			if signedBy(&fh.Recent[i], pub) {
				if last >= 0 && k != last {
					turns++
				}
				last, newest = k, pub
				break
			}
		}
	}
	return turns, newest
}

func rangeEnd(first, last int64, more bool) string {
	switch {
	case more:
		return "–…"
	case last != first:
		return "–#" + strconv.FormatInt(last, 10)
	}
	return ""
}

// seqList renders a set of sequence numbers as ranges: "3-5, 9".
func seqList(set map[int64]bool) string {
	seqs := make([]int64, 0, len(set))
	for s := range set {
		seqs = append(seqs, s)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	var parts []string
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		p := "#" + strconv.FormatInt(seqs[i], 10)
		if j > i {
			p += "-" + strconv.FormatInt(seqs[j], 10)
		}
		parts = append(parts, p)
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// feedWriters returns the writers of the feeds a report covers (from
// their findings' and the files' names).
func feedWriters(rep *livelog.Report) map[string]bool {
	out := map[string]bool{}
	for _, f := range rep.Files {
		base := strings.TrimSuffix(filepath.Base(f), ".md")
		if strings.Contains(base, "@") && (strings.HasPrefix(f, vault.LiveLogDir+"/") || strings.HasPrefix(f, livelog.DecisionsDir+"/")) {
			out[base] = true
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unpinned reports, once per writer, the entries signed with a key this
// machine has not pinned for their writer (verify's "key changed" and
// "new writer"): the fix is a person's decision, made after comparing
// fingerprints. Writers with a fork are left to the forks check, which
// names the two machines behind it.
func (c *checker) unpinned(rep *livelog.Report) []Finding {
	forked := map[string]bool{}
	type tally struct {
		status livelog.Status
		n      int
		file   string
		first  int64
		detail string
	}
	by := map[string]*tally{}
	for _, f := range rep.Findings {
		switch f.Status {
		case livelog.StatusForked:
			forked[f.Writer] = true
		case livelog.StatusKeyChanged, livelog.StatusNewWriter:
			t := by[f.Writer]
			if t == nil {
				t = &tally{status: f.Status, file: f.File, first: f.Seq, detail: f.Detail}
				by[f.Writer] = t
			}
			t.n++
		}
	}
	var out []Finding
	for _, w := range sortedKeys(by) {
		if forked[w] {
			continue
		}
		t := by[w]
		out = append(out, Finding{
			Path: t.file,
			Problem: fmt.Sprintf("%s of %s %s not shown as intact (%s, from #%d): %s",
				plural(t.n, "entry", "entries"), w, map[bool]string{true: "is", false: "are"}[t.n == 1], t.status, t.first, t.detail),
			Fix: "compare the fingerprint with " + c.cmd("agent", "show", livelog.WriterAgent(w)) + " on the machine " + w + " names; if it is that machine's key, accept it here: " +
				c.cmd("log", "trust", w) + "; if nobody made that key, the vault was tampered with: restore " + t.file + " and the agent's IDENTITY.md from a backup",
		})
	}
	return out
}
