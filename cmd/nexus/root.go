package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/identity"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

// globals are the flags every command takes, and the streams and clock it
// writes with.
type globals struct {
	vaultDir string
	agent    string
	json     bool

	// ran is set once a command's own code starts: errors before it are
	// usage errors from flag and argument parsing.
	ran bool

	// args are the command line as given, for a lean build to pass on
	// to the full nexus (build_lite.go).
	args []string

	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	now    func() time.Time
}

// topLevel is a top-level command: its name, and the function that
// builds it (with its own subcommands).
type topLevel struct {
	name string
	new  func(g *globals) *cobra.Command
}

// subcommands are registered by each cmd_*.go file's init, so that every
// command lives in its own file, with their names, so that a run builds
// only the command it runs (see topCommand).
var subcommands []topLevel

// register adds the top-level command name, built by f. TestCommandNames
// checks that name is the built command's own.
func register(name string, f func(g *globals) *cobra.Command) {
	subcommands = append(subcommands, topLevel{name, f})
}

// newRoot builds the whole command tree.
func newRoot(g *globals) *cobra.Command { return newTree(g, "", false) }

// newTree builds the command tree: with lean set, only the top-level
// command only ("": none), for a command line that topCommand found runs
// it. Building the whole tree — thirty commands, their flags and help —
// was forty page faults of every start (about a millisecond on the VMs
// the benchmarks ran on; docs/benchmarks.md, "Issue 33: start-up").
func newTree(g *globals, only string, lean bool) *cobra.Command {
	if !lean {
		only = ""
	}
	root := &cobra.Command{
		Use:   "nexus",
		Short: "Shared, durable memory for cooperating AI agents, in a markdown vault",
		Long: `Nexus keeps the memory of several cooperating AI agents in a plain markdown
vault that people also edit in Obsidian: bounded per-agent memory, one file
per durable fact, a signed append-only live log every agent reads before it
replies, decisions, checkpoints, human review, and ranked search — as CLI
commands and as MCP tools ('nexus serve').

The vault is --vault, else $NEXUS_VAULT, else the nearest folder upward
holding .nexus/. The agent is --agent, else $NEXUS_AGENT.

Exit codes: 0 ok, 1 refused or failed operation, 2 bad usage, 3 could not
check or could not get a lock in time (docs/cli.md).
With --json every command prints exactly one JSON object on stdout:
{"success": true, ...} on success, {"success": false, "error": ...,
"exit_code": ...} on failure (docs/cli.md).

nexus-lite is the same commands built without the MCP server and the
search index (go build -tags lite): it starts several times faster, and
runs serve, search, index, watch, doctor and demo through the full nexus
found beside it or on $PATH (docs/cli.md, "The lean build").

Examples:
  nexus init ~/vault && export NEXUS_VAULT=~/vault
  nexus agent add lyra --role "operations: deploys, on-call"
  nexus --agent lyra prompt
  nexus search "로그인" --json
  nexus COMMAND --help`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	pf := root.PersistentFlags()
	pf.StringVar(&g.vaultDir, "vault", "", "vault folder (default $NEXUS_VAULT, else nearest folder upward holding .nexus/)")
	pf.StringVar(&g.agent, "agent", "", "agent name (default $NEXUS_AGENT)")
	pf.BoolVar(&g.json, "json", false, "print one machine-readable JSON document on stdout")
	var showVersion bool
	root.Flags().BoolVar(&showVersion, "version", false, "print the version (same as 'nexus version')")
	root.Args = cobra.NoArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		g.ran = true
		if showVersion {
			return runVersion(g)
		}
		if g.json {
			return g.emit(listOf("commands", commandList(cmd)), nil, nil)
		}
		return cmd.Help()
	}
	root.RegisterFlagCompletionFunc("agent", func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return g.agentNames(), cobra.ShellCompDirectiveNoFileComp
	})
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err.Error()} })
	var cmds []*cobra.Command
	for _, sc := range subcommands {
		if !lean || sc.name == only {
			cmds = append(cmds, sc.new(g))
		}
	}
	// The lean build's stand-ins for the commands it leaves out; none in
	// the full build, where those commands register themselves.
	if !lean || only != "" {
		cmds = append(cmds, forwardedCommands(g, only)...)
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name() < cmds[j].Name() })
	for _, c := range cmds {
		root.AddCommand(c)
		wire(g, c)
	}
	root.SuggestionsMinimumDistance = suggestDistance
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Run, c.RunE = nil, func(cmd *cobra.Command, args []string) error { return runHelp(root, args) }
		}
	}
	return root
}

// suggestDistance is how far (in edits, as Levenshtein counts them) a
// mistyped command may be from the one suggested: two, so that a swap of
// two letters ("serach", "reveiw", "log raed") is caught.
const suggestDistance = 2

// runHelp prints the help of the command args name, as 'nexus help log
// read'. A topic that names no command is bad usage, as git and gh have
// it, rather than the root help and exit 0.
func runHelp(root *cobra.Command, args []string) error {
	cur := root
	for _, a := range args {
		next := subcommand(cur, a)
		if next == nil {
			msg := fmt.Sprintf("unknown help topic %q", strings.Join(args, " "))
			if cur != root {
				msg += fmt.Sprintf(": %q is not a command of '%s'", a, cur.CommandPath())
			}
			if sug := cur.SuggestionsFor(a); len(sug) > 0 {
				msg += "; did you mean " + strings.Join(sug, " or ") + "?"
			}
			return usageError{msg}
		}
		cur = next
	}
	return cur.Help()
}

// subcommand is c's command named (or aliased) name that a person can ask
// help for, or nil.
func subcommand(c *cobra.Command, name string) *cobra.Command {
	for _, sub := range c.Commands() {
		if (sub.Name() == name || sub.HasAlias(name)) && (sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() || sub.Name() == "help") {
			return sub
		}
	}
	return nil
}

// wire marks, for every command in the tree, the moment its own code starts
// running: an error before that (a bad flag, a wrong argument count, an
// unknown subcommand) is bad usage. A command group given an unknown
// subcommand, or none, is bad usage too, where cobra would print help and
// exit 0.
func wire(g *globals, c *cobra.Command) {
	c.SuggestionsMinimumDistance = suggestDistance
	for _, sub := range c.Commands() {
		wire(g, sub)
	}
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			g.ran = true
			return run(cmd, args)
		}
		return
	}
	if !c.HasSubCommands() || c.Run != nil {
		return
	}
	c.Args = cobra.ArbitraryArgs
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations["nexus-group"] = "true"
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		if len(args) > 0 {
			msg := fmt.Sprintf("%q is not a command of '%s' (its commands: %s)", args[0], cmd.CommandPath(), strings.Join(names, ", "))
			if sug := cmd.SuggestionsFor(args[0]); len(sug) > 0 {
				msg += "; did you mean " + strings.Join(sug, " or ") + "?"
			}
			return usageError{msg}
		}
		return usagef("'%s' needs a command: %s", cmd.CommandPath(), strings.Join(names, ", "))
	}
}

// run executes one nexus invocation and returns its exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runTree(ctx, args, stdin, stdout, stderr, topCommand)
}

// runTree is run, building the part of the command tree that pick says
// (topCommand; tests compare it with the whole tree).
func runTree(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, pick func(args []string) (only string, lean bool)) int {
	// Long-running commands (watch, serve) log from several goroutines.
	stderr = &syncWriter{w: stderr}
	g := &globals{ctx: ctx, args: args, stdin: stdin, stdout: stdout, stderr: stderr, now: time.Now}
	only, lean := pick(args)
	root := newTree(g, only, lean)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	g.json = jsonRequested(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	var fe forwardedExit
	if errors.As(err, &fe) {
		return fe.code
	}
	return g.fail(cmd, err)
}

// topCommand returns the top-level command args run, with lean true when
// building that command alone (none, for only "") runs args exactly as the
// whole tree would: the first argument that is neither a global flag
// (--vault, --agent, --json) nor its value names a registered command
// other than help and completion, or there is none and --version is given.
// Anything else — no command, help, an unknown command (whose suggestions
// need every name), any other flag before the command — gets the whole
// tree.
func topCommand(args []string) (only string, lean bool) {
	version := false
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--vault" || a == "--agent":
			i++ // its value
		case strings.HasPrefix(a, "--vault=") || strings.HasPrefix(a, "--agent=") || a == "--json" || strings.HasPrefix(a, "--json="):
		case a == "--version":
			version = true
		case strings.HasPrefix(a, "-"):
			return "", false
		case version || a == "help" || a == "completion":
			return "", false
		default:
			for _, sc := range subcommands {
				if sc.name == a {
					return a, true
				}
			}
			if forwarded(a) {
				return a, true
			}
			return "", false
		}
	}
	return "", version
}

// reportedError wraps an error whose JSON result was already printed.
type reportedError struct{ err error }

func (e reportedError) Error() string { return e.err.Error() }
func (e reportedError) Unwrap() error { return e.err }

// openVault opens the vault named by --vault, $NEXUS_VAULT or the working
// directory's ancestors.
func (g *globals) openVault() (*vault.Vault, error) {
	dir, err := g.findVault()
	if err != nil {
		return nil, err
	}
	v, err := vault.Open(dir)
	if err != nil {
		return nil, err
	}
	v.OnLockWait(g.sayLockWait)
	// A review decision a killed process left half done is finished by
	// the next command, whichever it is (one directory read when there is
	// none). A failure here is doctor's to report, not this command's.
	retention.Recover(v)
	return v, nil
}

// sayLockWait tells the person at the other end, once a lock wait has
// lasted a second, whom this command waits for and for how long it will.
func (g *globals) sayLockWait(n vault.LockWaitNotice) {
	who := "another process"
	switch {
	case n.Self:
		who = "another operation of this process"
	case n.PID > 0:
		who = fmt.Sprintf("process %d", n.PID)
	}
	fmt.Fprintf(g.stderr, "nexus: waiting for %s, held by %s; giving up after %s (lock_timeout)\n",
		n.Name, who, n.Wait.Round(time.Second))
}

// findVault returns the vault's folder: --vault, else $NEXUS_VAULT, else
// the nearest folder upward holding .nexus/ (see checkVaultDir).
func (g *globals) findVault() (string, error) {
	dir, err := vault.Find(g.vaultDir)
	if err != nil {
		return "", err
	}
	return dir, g.checkVaultDir(dir)
}

// checkVaultDir says, of a vault folder named by --vault or $NEXUS_VAULT,
// that it does not exist or is no vault, in those words: 'nexus init' is
// the fix only for a folder that exists.
func (g *globals) checkVaultDir(dir string) error {
	from := "--vault"
	switch {
	case g.vaultDir != "":
	case os.Getenv("NEXUS_VAULT") != "":
		from = "$NEXUS_VAULT"
	default:
		return nil // found upward: it holds .nexus/
	}
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("vault folder %s (%s) does not exist", dir, from)
	case err != nil:
		return fmt.Errorf("open vault %s (%s): %w", dir, from, err)
	case !st.IsDir():
		return fmt.Errorf("vault %s (%s) is not a folder", dir, from)
	}
	if _, err := os.Stat(filepath.Join(dir, vault.NexusDir)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s (%s) is not a Nexus vault: it has no .nexus/ folder (to make it one: nexus init %s)", dir, from, dir)
	}
	return nil
}

// commandInfo is one command in 'nexus --json' with no command.
type commandInfo struct {
	Command string `json:"command"`
	Summary string `json:"summary"`
}

// commandList lists every command under root that a person can run, for
// 'nexus --json' without a command.
func commandList(root *cobra.Command) []commandInfo {
	var out []commandInfo
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			out = append(out, commandInfo{sub.CommandPath(), sub.Short})
			walk(sub)
		}
	}
	walk(root)
	return out
}

// agentNames lists the vault's agents, for shell completion; nil when there
// is no vault.
func (g *globals) agentNames() []string {
	v, err := g.openVault()
	if err != nil {
		return nil
	}
	names, _ := identity.List(v)
	return names
}

// agentName returns --agent or $NEXUS_AGENT, or a usage error.
func (g *globals) agentName() (string, error) {
	if g.agent != "" {
		return g.agent, nil
	}
	if a := os.Getenv("NEXUS_AGENT"); a != "" {
		return a, nil
	}
	return "", usagef("no agent: pass --agent NAME or set NEXUS_AGENT")
}

// emit prints a command's result: JSON if --json, else the text human
// renders. If err is not nil the result is still printed (with --json, so
// scripts get error details such as current_entries) and err is returned
// marked as reported.
func (g *globals) emit(result any, err error, human func(w io.Writer)) error {
	if g.json {
		if result != nil {
			if err != nil {
				// A failure document says so the same way everywhere.
				result = failureDocument(result, g.plainMessage(nil, err), g.exitCode(err))
			} else {
				// And so does a success document.
				result = successDocument(result)
			}
			enc := json.NewEncoder(g.stdout)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if eerr := enc.Encode(result); eerr != nil {
				return eerr
			}
		}
	} else if human != nil && (err == nil || result != nil) {
		human(g.stdout)
	}
	if err != nil {
		return reportedError{err}
	}
	return nil
}

// successDocument is result as a success document: a JSON object whose
// first field is "success": true, then the result's own fields in their
// order (docs/cli.md). A result that is not an object (none of the
// commands' results; see listOf) is kept under "result"; one that has a
// "success" field of its own (the memory commands', shaped as Hermes's
// tool) is kept as it is.
func successDocument(result any) any {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(result); err != nil {
		return result // Encode fails the same way again and says why
	}
	b := bytes.TrimSpace(buf.Bytes())
	if len(b) == 0 || b[0] != '{' {
		return json.RawMessage(append(append([]byte(`{"success":true,"result":`), b...), '}'))
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(b, &fields) != nil {
		return result
	}
	if _, ok := fields["success"]; ok {
		return json.RawMessage(b)
	}
	if len(fields) == 0 {
		return json.RawMessage(`{"success":true}`)
	}
	return json.RawMessage(append([]byte(`{"success":true,`), b[1:]...))
}

// listOf is a list result under its name, {"NAME": [...]}, so that the
// command's success document is an object like every other.
func listOf[T any](name string, items []T) any {
	return namedList{name, nonNil(items)}
}

type namedList struct {
	name  string
	items any
}

func (l namedList) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{l.name: l.items})
}

// failureDocument adds "success": false, "error" and "exit_code" to a
// command's result, so that a failure's JSON carries them whether or not it
// also carries the result's details (current_entries, findings). A result
// that is not a JSON object is kept under "result".
func failureDocument(result any, msg string, code int) any {
	doc := map[string]any{}
	if b, err := json.Marshal(result); err == nil {
		var fields map[string]json.RawMessage
		if json.Unmarshal(b, &fields) == nil {
			for k, v := range fields {
				doc[k] = v
			}
		} else {
			doc["result"] = json.RawMessage(b)
		}
	}
	doc["success"], doc["error"], doc["exit_code"] = false, msg, code
	return doc
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
