//go:build lite

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// liteBuild reports whether this is the lean build (nexus-lite).
const liteBuild = true

// forwardSpec is one command the lean build leaves out, as the full build
// defines it: its help, its flags (for --help and for parsing the command
// line the same way) and its subcommands. build_lite_table.go holds them,
// generated from the full build's tree by
// 'go test ./cmd/nexus -run TestLiteTable -update'.
type forwardSpec struct {
	Use, Short, Long, Example string
	Aliases                   []string
	Hidden                    bool
	Runs                      bool // has code of its own (a group only lists its commands)
	Flags                     []forwardFlag
	Commands                  []forwardSpec
}

// forwardFlag is one flag of a forwardSpec. Default is "" when the full
// build's default is its type's zero (help then shows no default).
type forwardFlag struct {
	Name, Shorthand, Usage, Type, Default, NoOptDefault string
	Hidden                                              bool
}

// forwardedCommands is the lean build's half of the pair in build_full.go:
// a stand-in for each command this build leaves out, with the same name,
// help and flags, that runs the full nexus with this command line; only
// the one named only, when only is not "".
func forwardedCommands(g *globals, only string) []*cobra.Command {
	cmds := make([]*cobra.Command, 0, len(forwardTable))
	for _, s := range forwardTable {
		if only == "" || s.name() == only {
			cmds = append(cmds, s.command(g))
		}
	}
	return cmds
}

// forwarded reports whether name is a command this build runs through the
// full nexus.
func forwarded(name string) bool {
	for _, s := range forwardTable {
		if s.name() == name {
			return true
		}
	}
	return false
}

// name is the command's name, the first word of its Use line (as cobra's
// Command.Name).
func (s forwardSpec) name() string {
	name, _, _ := strings.Cut(s.Use, " ")
	return name
}

func (s forwardSpec) command(g *globals) *cobra.Command {
	c := &cobra.Command{Use: s.Use, Short: s.Short, Long: s.Long, Example: s.Example, Aliases: s.Aliases, Hidden: s.Hidden}
	if s.Runs {
		// Arguments are the full nexus's to check; --help is answered
		// here. A flag this stand-in cannot parse goes to the full nexus
		// too, which reports it in its own words.
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error { return g.standIn(cmd, args) }
		c.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error { return g.forward(cmd) })
	}
	for _, f := range s.Flags {
		var v interface {
			String() string
			Set(string) error
			Type() string
		} = &forwardValue{typ: f.Type, val: f.Default}
		if f.Type == "bool" {
			v = &forwardBool{forwardValue{typ: f.Type, val: f.Default}}
		}
		fl := c.Flags().VarPF(v, f.Name, f.Shorthand, f.Usage)
		fl.DefValue, fl.NoOptDefVal, fl.Hidden = f.Default, f.NoOptDefault, f.Hidden
	}
	for _, sub := range s.Commands {
		c.AddCommand(sub.command(g))
	}
	return c
}

// answeredHere are the forwarded commands the lean build answers itself
// when it can, by command path without the program's name: each reports
// whether it did, and the full nexus runs the command when it did not.
var answeredHere = map[string]func(g *globals, cmd *cobra.Command, args []string) (bool, error){
	"search": liteSearch,
}

// standIn runs a forwarded command: here if answeredHere can, else in the
// full nexus.
func (g *globals) standIn(cmd *cobra.Command, args []string) error {
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	if answer := answeredHere[path]; answer != nil {
		if answered, err := answer(g, cmd, args); answered {
			return err
		}
	}
	return g.forward(cmd)
}

// forwardValue is a flag of a forwarded command: it checks the value the
// way the full build's flag of that type would, and keeps nothing (the
// full nexus parses the command line again).
type forwardValue struct{ typ, val string }

func (v *forwardValue) String() string { return v.val }
func (v *forwardValue) Type() string   { return v.typ }

func (v *forwardValue) Set(s string) error {
	var err error
	switch v.typ {
	case "bool":
		_, err = strconv.ParseBool(s)
	case "int":
		_, err = strconv.ParseInt(s, 0, 0)
	case "float64":
		_, err = strconv.ParseFloat(s, 64)
	case "duration":
		_, err = time.ParseDuration(s)
	}
	// A repeatable flag (stringArray) keeps its last value: the command
	// line goes to the full nexus as it is.
	v.val = s
	return err
}

// forwardBool is a boolean flag: --flag alone means true.
type forwardBool struct{ forwardValue }

func (*forwardBool) IsBoolFlag() bool { return true }

// forward runs the full nexus with this process's command line, streams
// and environment, and returns its exit code as a forwardedExit (nil for
// 0). Started as a program of its own (nexus-lite on a terminal or from an
// adapter) on Unix it replaces this process, so signals, the process id
// and the exit status are the full nexus's own.
func (g *globals) forward(cmd *cobra.Command) error {
	if os.Getenv(liteHopEnv) != "" {
		self, _ := os.Executable()
		return noFullError{fmt.Sprintf("'%s' needs the full nexus, but this program (%s) was started for it by another nexus-lite: it is a lean build too. Put the full nexus there or set NEXUS_FULL to the full nexus's path", cmd.CommandPath(), self)}
	}
	full, err := findFull(cmd)
	if err != nil {
		return err
	}
	env := append(os.Environ(), liteHopEnv+"=1")
	if runtime.GOOS != "windows" && g.ownStdio() {
		err := syscall.Exec(full, append([]string{full}, g.args...), env)
		return fmt.Errorf("run the full nexus %s: %w", full, err)
	}
	c := exec.Command(full, g.args...)
	c.Env = env
	c.Stdin, c.Stdout, c.Stderr = g.stdin, g.stdout, unwrapWriter(g.stderr)
	if err := c.Start(); err != nil {
		return fmt.Errorf("run the full nexus %s: %w", full, err)
	}
	// Ctrl-C on a terminal reaches both processes; a SIGTERM sent to this
	// one is passed on, and this one waits for the full nexus to finish.
	done := make(chan struct{})
	defer close(done)
	if g.ctx != nil {
		go func() {
			select {
			case <-g.ctx.Done():
				c.Process.Signal(os.Interrupt)
			case <-done:
			}
		}()
	}
	err = c.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return forwardedExit{ee.ExitCode()}
	}
	return fmt.Errorf("the full nexus %s: %w", full, err)
}

// ownStdio reports whether the command's streams are this process's own,
// so that the full nexus can take them over as they are.
func (g *globals) ownStdio() bool {
	return g.stdin == os.Stdin && g.stdout == os.Stdout && unwrapWriter(g.stderr) == os.Stderr
}

// findFull finds the full nexus: $NEXUS_FULL if set, else a nexus beside
// this program, else the first nexus on $PATH that is not this program.
func findFull(cmd *cobra.Command) (string, error) {
	self, _ := os.Executable()
	isSelf := func(p string) bool {
		if self == "" {
			return false
		}
		a, errA := os.Stat(p)
		b, errB := os.Stat(self)
		return errA == nil && errB == nil && os.SameFile(a, b)
	}
	need := fmt.Sprintf("'%s' needs the full nexus (this is the lean build, nexus-lite)", cmd.CommandPath())
	if p := os.Getenv("NEXUS_FULL"); p != "" {
		if isSelf(p) {
			return "", noFullError{fmt.Sprintf("%s, but NEXUS_FULL=%s is this nexus-lite itself: set it to the full nexus's path", need, p)}
		}
		found, err := exec.LookPath(p)
		if err != nil {
			return "", noFullError{fmt.Sprintf("%s, but NEXUS_FULL=%s cannot be run: %v", need, p, errors.Unwrap(err))}
		}
		return found, nil
	}
	name := "nexus"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var beside string
	if self != "" {
		beside = filepath.Join(filepath.Dir(self), name)
		if p, err := exec.LookPath(beside); err == nil && !isSelf(p) {
			return p, nil
		}
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if !filepath.IsAbs(dir) {
			continue // as exec.LookPath: never a nexus from the working folder
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil && !isSelf(p) {
			return p, nil
		}
	}
	places := []string{"$NEXUS_FULL is not set"}
	if beside != "" {
		places = append(places, "there is no "+beside)
	}
	places = append(places, "no "+name+" on $PATH other than this one")
	return "", noFullError{fmt.Sprintf("%s and found none: %s. Install it (go install github.com/nexus-memory/nexus/cmd/nexus@latest) or set NEXUS_FULL to its path", need, strings.Join(places, ", "))}
}
