package demo

import (
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"strings"

	"github.com/nexus-memory/nexus/doctor"
)

// epilogue prints the health check, where the vault is, how to open it in
// Obsidian and how to connect a real agent to it.
func (d *demo) epilogue(rep *doctor.Report) {
	w, root, cmd := d.opts.Out, d.res.Vault, d.opts.Command
	fmt.Fprintf(w, "\n── Health ──\n")
	if rep.OK {
		names := make([]string, len(rep.Results))
		for i, r := range rep.Results {
			names[i] = r.Check
		}
		fmt.Fprintf(w, "  nexus doctor: all %d checks pass (%s).\n", len(rep.Results), strings.Join(names, ", "))
	}
	for _, f := range rep.Findings() {
		fmt.Fprintf(w, "  %s %s: %s\n    fix: %s\n", f.Check, f.Severity, f.Problem, f.Fix)
	}
	if d.res.Temp && d.opts.Remove && rep.OK {
		// Commands for a vault about to be deleted would fail.
		fmt.Fprintf(w, "\nDone in %s. The vault was a temp folder; it is removed now, as asked (--keep=false).\nRun the demo without --keep=false to keep a vault to open in Obsidian and try the CLI on.\n", d.res.Elapsed.Round(10e6))
		if d.opts.Setup != "" {
			fmt.Fprintf(w, "\n%s\n", d.opts.Setup)
		}
		return
	}
	fmt.Fprintf(w, "\nDone in %s. The vault is plain markdown:\n\n  %s\n", d.res.Elapsed.Round(10e6), root)
	fmt.Fprintf(w, `
Open it in Obsidian: "Open folder as vault" and pick that folder, or open
  obsidian://open?path=%s
Look at log/live/ (the signed live log), log/decisions/, agents/lyra/ and
agents/ella/ (memory, facts, checkpoints) and review/archive/.

%sTry the CLI on it:
  %s --vault %s log verify
  %s --vault %s --agent ella prompt
  %s --vault %s search "로그인"
`, url.PathEscape(root), setup(d.opts.Setup), cmd, doctor.Quote(root), cmd, doctor.Quote(root), cmd, doctor.Quote(root))

	b := mcpConfig(d.opts.MCPCommand, Lyra, root)
	fmt.Fprintf(w, `
Connect a real agent as lyra: put this in its MCP config (Claude Code:
.mcp.json; see examples/ for Hermes and OpenClaw):

  %s

Or serve both agents over HTTP:
  %s --vault %s serve --http 127.0.0.1:7777
with "Authorization: Bearer %s" for lyra (ella's token is in --json output).
`, strings.ReplaceAll(b, "\n", "\n  "), cmd, doctor.Quote(root), d.res.Tokens[Lyra])
	switch {
	case d.res.Temp && d.opts.Remove:
		// Not removed: doctor found something (see Health), so it
		// stays to look at.
		fmt.Fprintf(w, "\nThe vault is kept despite --keep=false, to look at what doctor found.\n")
	case d.res.Temp:
		rm := "rm -rf " + doctor.Quote(root)
		if runtime.GOOS == "windows" {
			rm = `rmdir /s /q "` + root + `"`
		}
		fmt.Fprintf(w, "\nThe vault is a temp folder and stays until you delete it: %s\n", rm)
	}
}

// setup is the how-to-get-nexus paragraph, with the blank line after it.
func setup(s string) string {
	if s == "" {
		return ""
	}
	return s + "\n\n"
}

// mcpConfig renders the .mcp.json that connects a real agent over stdio.
func mcpConfig(cmd, agent, root string) string {
	q := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return fmt.Sprintf(`{
  "mcpServers": {
    "nexus": {
      "command": %s,
      "args": ["serve", "--stdio", "--agent", %s],
      "env": { "NEXUS_VAULT": %s }
    }
  }
}`, q(cmd), q(agent), q(root))
}
