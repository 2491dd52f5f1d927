package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	_ "github.com/nexus-memory/nexus/conflicts" // carries out approved sync-conflict items (retention.RegisterKind)
	_ "github.com/nexus-memory/nexus/curator"   // carries out approved curator proposals
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register("review", newReviewCmd) }

// reviewOptions are the flags of 'nexus review' and its subcommands.
type reviewOptions struct {
	all  bool
	edit bool
	text string
	why  string
	by   string
	// only is 'approve --all --only AGENT' (--agent is the global flag,
	// and naming an agent there refuses approval).
	only string
}

func newReviewCmd(g *globals) *cobra.Command {
	var o reviewOptions
	cmd := &cobra.Command{
		Use:   "review [list|show|approve|reject|sign]",
		Short: "List, show, approve and reject what agents proposed to keep",
		Long: `Show the items waiting in review/pending/ (oldest first: id, agent, kind,
one line each) and decide them. Approval applies an item through the same
code path as a direct write (limits and scans still hold); an item whose
apply fails stays pending with the reason. Decided items move to
review/archive/ with who decided, when and why.

In Obsidian, a person can decide by setting status: approved or
status: rejected (and optionally why:) in a pending file's frontmatter;
every review command first carries such decisions out, as 'nexus watch' and
'nexus serve' do.

Only a person approves: approve, reject and rollback refuse to run when
--agent or $NEXUS_AGENT names an agent. The decider is recorded as --by,
else $NEXUS_REVIEWER, else your login name. With review.require_person_key
set in .nexus/config.yaml, each decision also asks for the passphrase of
your review key on the terminal and is signed with it ('nexus person
init'); approvals set in Obsidian then wait for 'nexus review sign'
(docs/review.md).

Example:
  nexus review
  nexus review show r-3f9c2a
  nexus review approve r-3f9c2a
  nexus review reject r-3f9c2a --why "wrong, user uses English"
  nexus review approve --all`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runReviewList(g) },
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List pending items, oldest first (also: plain 'nexus review')",
		Long: `List the pending items, oldest first, with how many wait and since when.
--agent NAME (else $NEXUS_AGENT, as for every command) lists only that
agent's items; a filter from $NEXUS_AGENT alone is noted on stderr, and
NEXUS_AGENT= lists every agent's.

Example:
  nexus review list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runReviewList(g) },
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one item in full, with provenance",
		Long: `Print a pending (or decided) item: what it proposes, its target, its
provenance, and the text.

Example:
  nexus review show r-3f9c2a`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReviewShow(g, args[0]) },
	}
	approve := &cobra.Command{
		Use:   "approve ID [--edit | --text TEXT] | --all",
		Short: "Approve an item (or every pending item with --all)",
		Long: `Apply a pending item and archive it as approved: a fact proposal becomes a
fact file, a held memory write lands in MEMORY.md or USER.md.

--edit opens $VISUAL or $EDITOR on the proposed text and approves what you
save; --text TEXT ('-' reads stdin) approves with that text instead. Both
work on facts and single add/replace memory writes.

--all approves every pending item (only those of --only AGENT if given),
oldest first, after taking a snapshot that
'nexus rollback' restores. Items that fail stay pending.

Example:
  nexus review approve r-3f9c2a --text "User wants PR descriptions in Korean, titles in English"
  nexus review approve --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReviewApprove(g, o, args) },
	}
	reject := &cobra.Command{
		Use:   "reject ID --why REASON",
		Short: "Reject an item, with the reason",
		Long: `Archive a pending item as rejected, with who decided and why. Nothing is
written to the agent's memory.

Example:
  nexus review reject r-3f9c2a --why "wrong, user uses English"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReviewReject(g, o, args[0]) },
	}
	sign := &cobra.Command{
		Use:   "sign ID...",
		Short: "Sign decisions set in Obsidian, so they are carried out",
		Long: `With review.require_person_key set, a status: approved or status: rejected
set in a pending file in Obsidian is not carried out until a person signs
it: this asks for your review key's passphrase on the terminal, signs each
item's decision as its file states it (with its why: and decided_by:),
and carries it out.

Example:
  nexus review sign r-3f9c2a r-77d01e`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReviewSign(g, args) },
	}
	for _, c := range []*cobra.Command{approve, reject} {
		c.Flags().StringVar(&o.why, "why", "", "the reason, kept in the archive")
		c.Flags().StringVar(&o.why, "reason", "", "same as --why")
		c.Flags().StringVar(&o.by, "by", "", "who decides (default $NEXUS_REVIEWER, else your login name)")
	}
	approve.Flags().BoolVar(&o.all, "all", false, "approve every pending item, after a snapshot")
	approve.Flags().BoolVar(&o.edit, "edit", false, "edit the text in $VISUAL/$EDITOR before approving")
	approve.Flags().StringVar(&o.text, "text", "", "approve with this text instead of the proposed one ('-' reads stdin)")
	approve.Flags().StringVar(&o.only, "only", "", "with --all: approve only this agent's items")
	cmd.AddCommand(list, show, approve, reject, sign)
	return cmd
}

// runReviewShow prints one item in full.
func runReviewShow(g *globals, id string) error {
	v, err := reviewSetup(g)
	if err != nil {
		return err
	}
	it, err := retention.Get(v, id)
	if err != nil {
		return err
	}
	return g.emit(it, nil, func(w io.Writer) { printItem(w, it) })
}

// runReviewApprove approves the item args[0], or every pending one with
// --all.
func runReviewApprove(g *globals, o reviewOptions, args []string) error {
	if o.all != (len(args) == 0) {
		return usagef("approve takes an item ID, or --all")
	}
	if o.all && (o.edit || o.text != "") {
		return usagef("--edit and --text approve one item; they do not go with --all")
	}
	if o.all {
		return runApproveAll(g, o)
	}
	return runDecide(g, o, args[0], true)
}

// runReviewReject archives an item as rejected, with --why.
func runReviewReject(g *globals, o reviewOptions, id string) error {
	if strings.TrimSpace(o.why) == "" {
		return usagef("reject needs --why REASON")
	}
	return runDecide(g, o, id, false)
}

// reviewSetup opens the vault and carries out decisions made in Obsidian.
func reviewSetup(g *globals) (*vault.Vault, error) {
	v, err := g.openVault()
	if err != nil {
		return nil, err
	}
	reconcile(g, v)
	return v, nil
}

// decidedBy is " by NAME" for a decision a named person made, and nothing
// for one made in Obsidian without a decided_by (recorded as "obsidian").
func decidedBy(who string) string {
	if who == "" || who == "obsidian" {
		return ""
	}
	return " by " + who
}

// reconcile carries out decisions made in Obsidian and says so on stderr.
func reconcile(g *globals, v *vault.Vault) {
	res, err := retention.Reconcile(v, g.now())
	for _, it := range res.Approved {
		fmt.Fprintf(g.stderr, "nexus: approved %s, as set in Obsidian%s\n", it.ID, decidedBy(it.DecidedBy))
	}
	for _, it := range res.Rejected {
		fmt.Fprintf(g.stderr, "nexus: rejected %s, as set in Obsidian%s\n", it.ID, decidedBy(it.DecidedBy))
	}
	for _, it := range res.Failed {
		fmt.Fprintf(g.stderr, "nexus: approval of %s set in Obsidian could not be applied; it stays pending: %s\n", it.ID, applyReason(it))
	}
	for _, it := range res.Unsigned {
		fmt.Fprintf(g.stderr, "nexus: %s is marked %s in Obsidian and waits for a person's signature (review.require_person_key): 'nexus review sign %s'\n", it.ID, it.Status, it.ID)
	}
	if err != nil {
		fmt.Fprintf(g.stderr, "nexus: warning: %v\n", err)
	}
}

// personOnly refuses decisions made in an agent's name.
func personOnly(g *globals) error {
	if g.agent != "" || os.Getenv("NEXUS_AGENT") != "" {
		return refusedf("only a person approves, rejects or rolls back, and this command runs as an agent (--agent or $NEXUS_AGENT is set)")
	}
	return nil
}

// decider names who decides.
func decider(by string) string {
	if by = strings.TrimSpace(by); by != "" {
		return by
	}
	if r := os.Getenv("NEXUS_REVIEWER"); r != "" {
		return r
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "person"
}

type reviewListJSON struct {
	Count  int       `json:"count"`
	Oldest time.Time `json:"oldest,omitzero"`
	// Agent is the agent filter (--agent, else $NEXUS_AGENT), "" for all.
	Agent string           `json:"agent,omitempty"`
	Items []retention.Item `json:"items"`
}

// listAgent is the agent a listing ('review list', 'journey') keeps:
// --agent, else $NEXUS_AGENT (SPEC §8, as for every command), "" for all;
// fromEnv says it came from the environment alone, which nothing on the
// command line shows, so the listing says so on stderr (noteEnvFilter).
func listAgent(g *globals) (name string, fromEnv bool) {
	if g.agent != "" {
		return g.agent, false
	}
	name = os.Getenv("NEXUS_AGENT")
	return name, name != ""
}

// noteEnvFilter says on stderr that a listing kept only agent's items
// because $NEXUS_AGENT is set (not with --json, whose document names the
// filter).
func noteEnvFilter(g *globals, agent, what string) {
	if agent != "" && !g.json {
		fmt.Fprintf(g.stderr, "nexus: %s of %s only ($NEXUS_AGENT); --agent NAME for another agent, NEXUS_AGENT= for all\n", what, agent)
	}
}

func runReviewList(g *globals) error {
	agent, fromEnv := listAgent(g)
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if err := knownAgent(v, agent); err != nil {
		return err // a typo must not read as "nothing waits"
	}
	// List first and reconcile only when a person decided something in
	// Obsidian: one read of each pending file in the common case.
	items, err := retention.List(v, retention.Filter{})
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.Status == retention.StatusApproved || it.Status == retention.StatusRejected {
			reconcile(g, v)
			if items, err = retention.List(v, retention.Filter{}); err != nil {
				return err
			}
			break
		}
	}
	if agent != "" {
		mine := items[:0]
		for _, it := range items {
			if it.Agent == agent {
				mine = append(mine, it)
			}
		}
		items = mine
	}
	if fromEnv {
		noteEnvFilter(g, agent, "items")
	}
	res := reviewListJSON{Count: len(items), Agent: agent, Items: nonNil(items)}
	for _, it := range items {
		if res.Oldest.IsZero() || it.Provenance.Time.Before(res.Oldest) {
			res.Oldest = it.Provenance.Time
		}
	}
	return g.emit(res, nil, func(w io.Writer) {
		if len(items) == 0 {
			if agent != "" {
				fmt.Fprintf(w, "Nothing of %s waits for review.\n", agent)
				return
			}
			fmt.Fprintln(w, "Nothing waits for review.")
			return
		}
		fmt.Fprintf(w, "%d pending since %s (oldest first)\n", res.Count, fmtDate(res.Oldest))
		var tb table
		tb.row("ID", "AGENT", "KIND", "PROPOSED", "SUMMARY")
		for _, it := range items {
			sum := it.Summary()
			if it.Error != "" {
				sum += "  [last approval failed: " + it.Error + "]"
			}
			if it.Status != retention.StatusPending && it.Status != "invalid" {
				sum += "  [status: " + it.Status + " is not understood; set approved or rejected]"
			}
			tb.row(it.ID, it.Agent, it.Kind, fmtDate(it.Provenance.Time), sum)
		}
		tb.write(w)
	})
}

func printItem(w io.Writer, it retention.Item) {
	fmt.Fprintf(w, "%s  %s  %s → %s\n", it.ID, it.Status, it.Kind, it.Target)
	fmt.Fprintf(w, "agent:    %s\nproposed: %s", it.Agent, fmtDate(it.Provenance.Time))
	if it.Provenance.Session != "" {
		fmt.Fprintf(w, "  session %s", it.Provenance.Session)
	}
	if it.Provenance.Source != "" {
		fmt.Fprintf(w, "  source %s", it.Provenance.Source)
	}
	fmt.Fprintln(w)
	if it.Kind == retention.KindFact {
		fmt.Fprintf(w, "name:     %s\ndescription: %s\ntype:     %s\n", it.Name, it.Description, it.FactType)
	} else {
		for i, op := range it.Ops {
			fmt.Fprintf(w, "op %d:     %s", i+1, op.Action)
			if op.OldText != "" {
				fmt.Fprintf(w, " (entry matching %q)", op.OldText)
			}
			fmt.Fprintln(w)
		}
	}
	if it.DecidedBy != "" {
		fmt.Fprintf(w, "decided:  %s by %s", fmtDate(it.DecidedAt), it.DecidedBy)
		if it.Why != "" {
			fmt.Fprintf(w, ": %s", it.Why)
		}
		fmt.Fprintln(w)
	}
	if it.Error != "" {
		fmt.Fprintf(w, "last approval failed: %s\n", it.Error)
	}
	fmt.Fprintf(w, "file:     %s\n\n%s\n", it.Path, it.Body)
}

func runDecide(g *globals, o reviewOptions, id string, approve bool) error {
	if err := personOnly(g); err != nil {
		return err
	}
	if o.edit && o.text != "" {
		return usagef("give --edit or --text, not both")
	}
	v, err := reviewSetup(g)
	if err != nil {
		return err
	}
	d := retention.Decision{By: decider(o.by), Why: o.why, Now: g.now()}
	switch {
	case o.text == "-":
		s, err := g.readStdin("the text")
		if err != nil {
			return err
		}
		d.Text = &s
	case o.text != "":
		d.Text = &o.text
	case o.edit:
		it, err := retention.Get(v, id)
		if err != nil {
			return err
		}
		s, err := editText(g, it.Body)
		if err != nil {
			return err
		}
		d.Text = &s
	}
	if d.Signer, err = signerFor(g, v); err != nil {
		return err
	}
	var it retention.Item
	if approve {
		it, err = retention.Approve(v, id, d)
	} else {
		it, err = retention.Reject(v, id, d)
	}
	if err != nil && errors.Is(err, retention.ErrApply) {
		it.Error = err.Error()
		return g.emit(it, err, nil)
	}
	if err != nil {
		return err
	}
	return g.emit(it, nil, func(w io.Writer) {
		if approve {
			fmt.Fprintf(w, "Approved %s: wrote %s; archived as %s\n", it.ID, it.Result, it.Path)
		} else {
			fmt.Fprintf(w, "Rejected %s; archived as %s\n", it.ID, it.Path)
		}
	})
}

// editText lets a person edit text in $VISUAL or $EDITOR, in a temp file
// outside the vault.
func editText(g *globals, text string) (string, error) {
	editor := os.Getenv("VISUAL")
	if editor == "" {
		editor = os.Getenv("EDITOR")
	}
	if editor == "" {
		return "", usagef("--edit needs $VISUAL or $EDITOR; or pass the new text with --text")
	}
	f, err := os.CreateTemp("", "nexus-review-*.md")
	if err != nil {
		return "", fmt.Errorf("edit: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("edit: %w", err)
	}
	f.Close()
	fields := strings.Fields(editor)
	c := exec.CommandContext(g.ctx, fields[0], append(fields[1:], f.Name())...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, g.stderr, g.stderr
	if err := c.Run(); err != nil {
		return "", fmt.Errorf("editor %s: %w", fields[0], err)
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		return "", fmt.Errorf("edit: %w", err)
	}
	return string(data), nil
}

func runApproveAll(g *globals, o reviewOptions) error {
	if err := personOnly(g); err != nil {
		return err
	}
	v, err := reviewSetup(g)
	if err != nil {
		return err
	}
	signer, err := signerFor(g, v)
	if err != nil {
		return err
	}
	res, err := retention.ApproveAll(v, retention.Filter{Agent: o.only}, retention.Decision{By: decider(o.by), Why: o.why, Now: g.now(), Signer: signer})
	res.Approved, res.Failed = nonNil(res.Approved), nonNil(res.Failed)
	if err == nil && len(res.Failed) > 0 {
		err = fmt.Errorf("%d of %d items could not be applied and stay pending, each for the reason given with it", len(res.Failed), len(res.Failed)+len(res.Approved))
	}
	return g.emit(res, err, func(w io.Writer) {
		if res.Snapshot == "" {
			fmt.Fprintln(w, "Nothing waits for review.")
			return
		}
		fmt.Fprintf(w, "Approved %s (snapshot %s; undo with 'nexus rollback %s')\n", plural(len(res.Approved), "item", "items"), res.Snapshot, res.Snapshot)
		for _, it := range res.Approved {
			fmt.Fprintf(w, "  %s → %s\n", it.ID, it.Result)
		}
		for _, it := range res.Failed {
			fmt.Fprintf(w, "  %s stays pending: %s\n", it.ID, applyReason(it))
		}
	})
}

// applyReason is why approving it could not be applied, without the
// item's id and the "stays pending" that the line it is printed in says
// already (retention's error carries both, for callers that print it
// alone).
func applyReason(it retention.Item) string {
	s := strings.TrimPrefix(it.Error, it.ID+": ")
	return strings.TrimPrefix(s, retention.ErrApply.Error()+": ")
}

// runReviewSign signs and carries out decisions set in Obsidian.
func runReviewSign(g *globals, ids []string) error {
	if err := personOnly(g); err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if _, err := retention.Recover(v); err != nil {
		return err
	}
	items := make([]retention.Item, 0, len(ids))
	for _, id := range ids {
		it, err := retention.Get(v, id)
		if err != nil {
			return err
		}
		if it.Path != retention.PendingPath(id) {
			return refusedf("%s is decided already (%s)", id, it.Path)
		}
		if it.Status != retention.StatusApproved && it.Status != retention.StatusRejected {
			return usagef("%s is not marked approved or rejected in its file (status: %s); decide it with 'nexus review approve %s' or 'nexus review reject %s --why ...'", id, it.Status, id, id)
		}
		items = append(items, it)
	}
	k, err := unlockPersonKey(g, v)
	if err != nil {
		return err
	}
	var done []retention.Item
	var errs []error
	for _, it := range items {
		by := it.DecidedBy
		if by == "" {
			by = k.Name
		}
		d := retention.Decision{By: by, Why: it.Why, Now: g.now(), Signer: k}
		var r retention.Item
		if it.Status == retention.StatusApproved {
			r, err = retention.Approve(v, it.ID, d)
		} else {
			r, err = retention.Reject(v, it.ID, d)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, r)
	}
	err = errors.Join(errs...)
	return g.emit(struct {
		Signed []retention.Item `json:"signed"`
	}{nonNil(done)}, err, func(w io.Writer) {
		for _, it := range done {
			fmt.Fprintf(w, "Signed %s (%s by %s); archived as %s\n", it.ID, it.Status, it.SignedBy, it.Path)
		}
	})
}
