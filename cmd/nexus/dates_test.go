package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestDateFlagsShareOneParser runs every --since and --until of the command
// tree with each accepted kind of value and with a bad one: all accept the
// same layouts (internal/dates) and refuse the same way, as bad usage.
func TestDateFlagsShareOneParser(t *testing.T) {
	dir := logVault(t)
	// The arguments each command with a date flag needs besides the flag.
	base := map[string][]string{
		"nexus journey":  {"journey"},
		"nexus log read": {"log", "read"},
		"nexus search":   {"search", "anything", "--hold", "0"},
	}
	// Every date flag in the tree is covered: a new one must be added above.
	var walk func(c *cobra.Command)
	seen := map[string]bool{}
	walk = func(c *cobra.Command) {
		for _, name := range []string{"since", "until"} {
			if f := c.LocalFlags().Lookup(name); f != nil {
				seen[c.CommandPath()] = true
				if !strings.Contains(f.Usage, dateHelp) {
					t.Errorf("%s --%s: its help %q does not name the layouts (dateHelp)", c.CommandPath(), name, f.Usage)
				}
				if _, ok := base[c.CommandPath()]; !ok {
					t.Errorf("%s has --%s: add it to the table of TestDateFlagsShareOneParser", c.CommandPath(), name)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(&globals{}))
	for path := range base {
		if !seen[path] {
			t.Errorf("%s has no --since or --until any more: drop it from the table", path)
		}
	}

	for path, args := range base {
		for _, flag := range []string{"--since", "--until"} {
			c, _, _ := newRoot(&globals{}).Find(strings.Fields(strings.TrimPrefix(path, "nexus ")))
			if c.LocalFlags().Lookup(strings.TrimPrefix(flag, "--")) == nil {
				continue
			}
			for _, value := range []string{"2026-11-01", "2026-11-01T10:30", "2026-11-01 10:30", "2026-11-01T19:30:00+09:00", "2026-11-01T19:30+09:00"} {
				cmd := append([]string{"--vault", dir, "--agent", "lyra"}, args...)
				cmd = append(cmd, flag, value)
				if code, out, errs := logCLI(t, "", cmd...); code != 0 {
					t.Errorf("%s %s %q: exit %d\n%s%s", path, flag, value, code, out, errs)
				}
			}
			cmd := append([]string{"--vault", dir, "--agent", "lyra"}, args...)
			cmd = append(cmd, flag, "2026-13-01")
			code, _, errs := logCLI(t, "", cmd...)
			if code != exitUsage || !strings.Contains(errs, flag+` "2026-13-01" is not a date or time: use a date like 2026-11-01`) {
				t.Errorf("%s %s 2026-13-01: exit %d, stderr %q", path, flag, code, errs)
			}
		}
	}
}
