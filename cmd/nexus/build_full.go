//go:build !lite

package main

import (
	"os"

	"github.com/spf13/cobra"
)

// liteBuild reports whether this is the lean build (nexus-lite).
const liteBuild = false

// A full nexus a lean build started clears the lean build's marker, so
// that a nexus-lite started by this process in turn (a hook, an agent
// under 'nexus demo') forwards as usual.
func init() { os.Unsetenv(liteHopEnv) }

// forwardedCommands is the full build's half of the pair in
// build_lite.go: every command is real here and registers itself from its
// own file, so there is nothing to stand in for.
func forwardedCommands(g *globals, only string) []*cobra.Command { return nil }

// forwarded reports whether name is a command this build runs through
// the full nexus: none.
func forwarded(name string) bool { return false }
