package main

// The lean build (go build -tags lite, installed as nexus-lite) leaves out
// the commands that need the MCP server, the search index or doctor, and
// with them the package init of their libraries (bleve, mcp-go and its
// JSON Schema validator: about 10 ms of every start-up). It keeps those
// commands in its tree, with the same help, and runs them by starting the
// full nexus with the same arguments (build_lite.go). docs/cli.md, "The
// lean build".

// liteHopEnv is set in the environment of the full nexus a lean build
// starts. A lean build that finds it set is being started by another lean
// build that took it for the full one: it stops there rather than loop.
// The full build clears it as it starts (build_full.go), so that lean
// builds its commands start (hooks, an agent runtime under 'nexus demo')
// forward as usual.
const liteHopEnv = "NEXUS_LITE_FORWARDED"

// forwardedExit is the exit code of the full nexus a forwarded command ran:
// it printed its own output and errors, so run only passes the code on.
type forwardedExit struct{ code int }

func (e forwardedExit) Error() string { return "the full nexus exited with a failure" }

// noFullError says the lean build found no full nexus to run a command
// only the full build has (exit 2: in this build, as installed, the
// command cannot run).
type noFullError struct{ msg string }

func (e noFullError) Error() string { return e.msg }
