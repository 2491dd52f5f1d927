package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/nexus-memory/nexus/person"
	"github.com/nexus-memory/nexus/retention"
	"github.com/nexus-memory/nexus/vault"
)

func init() { register("person", newPersonCmd) }

func newPersonCmd(g *globals) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "person [init|list|trust]",
		Short: "A person's review key: only a person approves, and an agent cannot pass for one",
		Long: `A person's review key signs review decisions (docs/review.md). It is an
ed25519 key kept on this machine only (.nexus/keys/person/NAME.key, never
synced, never in markdown), sealed with a passphrase (PBKDF2-SHA256,
600,000 rounds, AES-256-GCM). Its public half is .nexus/people/NAME.pub,
which travels with the vault.

With review.require_person_key: true in .nexus/config.yaml, approving,
rejecting and rolling back ask for the passphrase on a terminal and sign
the decision; approvals set in Obsidian wait for 'nexus review sign'.

The passphrase is read only from a terminal, never from an argument, a
file or the environment.

Example:
  nexus person init --name ada
  nexus person list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPersonList(g) },
	}
	initCmd := &cobra.Command{
		Use:   "init [--name NAME]",
		Short: "Create a review key for you on this machine, sealed with a passphrase",
		Long: `Create a person's review key: asks for a passphrase twice (at least 12
characters) on the terminal, writes the sealed key to .nexus/keys/person/
and the public key to .nexus/people/NAME.pub, and trusts it on this
machine. NAME is --name, else your login name. Compare the fingerprint it
prints when you trust the key on another machine ('nexus person trust').

When this machine holds a review key already, making another one asks for
that key's passphrase first.

Example:
  nexus person init --name ada`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPersonInit(g, name) },
	}
	initCmd.Flags().StringVar(&name, "name", "", "the key's name (default: your login name)")
	list := &cobra.Command{
		Use:   "list",
		Short: "List the people's public review keys and whether this machine trusts each",
		Long: `List .nexus/people/*.pub with each key's fingerprint and whether this
machine trusts it: "trusted", "not trusted on this machine" (made on
another machine, or added by whoever can write the vault), "changed since
this machine trusted it", or "unreadable".

Example:
  nexus person list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runPersonList(g) },
	}
	trust := &cobra.Command{
		Use:   "trust NAME",
		Short: "Trust on this machine the review key a person made on another",
		Long: `Trust NAME's public key (.nexus/people/NAME.pub) on this machine, so that
decisions signed with it verify here. It shows the fingerprint: compare it
with the one 'nexus person init' printed where the key was made. It asks
on the terminal: for the passphrase of a review key this machine holds,
if it holds one, else for a yes.

Example:
  nexus person trust ada`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runPersonTrust(g, args[0]) },
	}
	cmd.AddCommand(initCmd, list, trust)
	return cmd
}

// errNoTerminal refuses to read a passphrase from anything but a terminal.
var errNoTerminal = refusedf("a person's review key is opened only with a passphrase typed on a terminal, and standard input is not a terminal")

// terminalIn is stdin when it is a terminal.
func terminalIn(g *globals) (*os.File, bool) {
	f, ok := g.stdin.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

// readPassphrase reads a passphrase typed on the terminal on stdin,
// without echo.
func readPassphrase(g *globals, prompt string) ([]byte, error) {
	f, ok := terminalIn(g)
	if !ok {
		return nil, errNoTerminal
	}
	fmt.Fprint(g.stderr, prompt)
	p, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(g.stderr)
	if err != nil {
		return nil, fmt.Errorf("read passphrase: %w", err)
	}
	return p, nil
}

// readTerminalLine reads one answer typed on the terminal on stdin.
func readTerminalLine(g *globals, prompt string) (string, error) {
	f, ok := terminalIn(g)
	if !ok {
		return "", errNoTerminal
	}
	fmt.Fprint(g.stderr, prompt)
	line, err := bufio.NewReader(io.LimitReader(f, 1024)).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("read answer: %w", err)
	}
	return strings.TrimSpace(line), nil
}

// unlockPersonKey asks for the passphrase of this machine's review key
// (the first by name when it holds several) and opens it. Three tries.
func unlockPersonKey(g *globals, v *vault.Vault) (*person.Key, error) {
	names, err := person.LocalKeys(v)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, refusedf("this decision needs a person's review key, and this machine holds none: %v", person.ErrNoKey)
	}
	if _, ok := terminalIn(g); !ok {
		return nil, errNoTerminal
	}
	var last error
	for range 3 {
		p, err := readPassphrase(g, "Passphrase for review key "+names[0]+": ")
		if err != nil {
			return nil, err
		}
		k, err := person.Unlock(v, names[0], p)
		clear(p)
		if !errors.Is(err, person.ErrPassphrase) {
			return k, err
		}
		last = err
		fmt.Fprintln(g.stderr, "nexus: that passphrase does not open the key")
	}
	return nil, refusedf("%v", last)
}

// signerFor is the key a decision is signed with: unlocked on the
// terminal when the vault requires signed decisions, else none.
func signerFor(g *globals, v *vault.Vault) (*person.Key, error) {
	if !retention.RequirePersonKey(v) {
		return nil, nil
	}
	return unlockPersonKey(g, v)
}

func runPersonInit(g *globals, name string) error {
	if err := personOnly(g); err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if err := person.CheckName(name); err != nil {
		return usagef("%v; give --name", err)
	}
	if _, ok := terminalIn(g); !ok {
		return errNoTerminal
	}
	if local, err := person.LocalKeys(v); err != nil {
		return err
	} else if len(local) > 0 {
		if _, err := unlockPersonKey(g, v); err != nil {
			return err
		}
	}
	p1, err := readPassphrase(g, "New passphrase for review key "+name+" (at least 12 characters): ")
	if err != nil {
		return err
	}
	defer clear(p1)
	if len(p1) < person.MinPassphrase {
		return usagef("the passphrase is shorter than %d characters; nothing was written", person.MinPassphrase)
	}
	p2, err := readPassphrase(g, "The same passphrase again: ")
	if err != nil {
		return err
	}
	defer clear(p2)
	if string(p1) != string(p2) {
		return usagef("the two passphrases differ; nothing was written")
	}
	k, err := person.Create(v, name, p1, g.now())
	if err != nil {
		return err
	}
	res := struct {
		Name        string `json:"name"`
		Fingerprint string `json:"fingerprint"`
		Public      string `json:"public"`
	}{k.Name, person.Fingerprint(k.Public()), person.PeopleDir + "/" + k.Name + ".pub"}
	return g.emit(res, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Created review key %s, fingerprint %s.\n", res.Name, res.Fingerprint)
		fmt.Fprintf(w, "Sealed on this machine only: %s/%s.key. Public key: %s.\n", person.KeysDir, res.Name, res.Public)
		if !retention.RequirePersonKey(v) {
			fmt.Fprintln(w, "Decisions are signed when .nexus/config.yaml sets review: require_person_key: true (docs/review.md).")
		}
	})
}

func runPersonList(g *globals) error {
	v, err := g.openVault()
	if err != nil {
		return err
	}
	ps, err := person.People(v)
	if err != nil {
		return err
	}
	local, err := person.LocalKeys(v)
	if err != nil {
		return err
	}
	res := struct {
		People  []person.PublicKey `json:"people"`
		Local   []string           `json:"local"`
		Require bool               `json:"require_person_key"`
	}{nonNil(ps), nonNil(local), retention.RequirePersonKey(v)}
	return g.emit(res, nil, func(w io.Writer) {
		if len(ps) == 0 {
			fmt.Fprintln(w, "No person review keys.")
		} else {
			var tb table
			tb.row("NAME", "FINGERPRINT", "ON THIS MACHINE")
			for _, p := range ps {
				state := p.State
				if p.Error != "" {
					state += ": " + p.Error
				}
				tb.row(p.Name, p.Fingerprint, state)
			}
			tb.write(w)
		}
		fmt.Fprintf(w, "review.require_person_key: %v\n", res.Require)
	})
}

func runPersonTrust(g *globals, name string) error {
	if err := personOnly(g); err != nil {
		return err
	}
	v, err := g.openVault()
	if err != nil {
		return err
	}
	if _, ok := terminalIn(g); !ok {
		return errNoTerminal
	}
	ps, err := person.People(v)
	if err != nil {
		return err
	}
	var found *person.PublicKey
	for i := range ps {
		if ps[i].Name == name {
			found = &ps[i]
		}
	}
	if found == nil || found.State == person.Unreadable {
		return refusedf("no readable public review key %s/%s.pub", person.PeopleDir, name)
	}
	fmt.Fprintf(g.stderr, "Review key %s, fingerprint %s (%s).\n", name, found.Fingerprint, found.State)
	local, err := person.LocalKeys(v)
	if err != nil {
		return err
	}
	if len(local) > 0 {
		if _, err := unlockPersonKey(g, v); err != nil {
			return err
		}
	} else if a, err := readTerminalLine(g, "Trust it for review decisions on this machine? [y/N] "); err != nil {
		return err
	} else if a = strings.ToLower(a); a != "y" && a != "yes" {
		return refusedf("not trusted; nothing changed")
	}
	p, err := person.Trust(v, name)
	if err != nil {
		return err
	}
	return g.emit(p, nil, func(w io.Writer) {
		fmt.Fprintf(w, "Trusted review key %s (%s) on this machine.\n", p.Name, p.Fingerprint)
	})
}
