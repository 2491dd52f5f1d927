//go:build lite

package main

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/nexus-memory/nexus/index/holder"
)

// liteSearch answers 'nexus search' in the lean build when a holder of
// the index runs ('nexus watch', 'nexus serve', the background 'nexus
// index hold'): it asks the holder itself, through the same wire the full
// build uses, and prints what the full build would. That spares a search
// the full nexus's start-up (about 12 ms of package init for the libraries
// of the index and the MCP server), which is most of a search's time when
// a holder answers. It reports false when it did not answer — no holder,
// one of another version that steps down for a newer Nexus, a command
// line or vault it cannot take as it is, any failure — and then the full
// nexus runs the command and says what it says.
func liteSearch(g *globals, cmd *cobra.Command, args []string) (answered bool, err error) {
	o, ok := liteSearchOptions(cmd, args)
	if !ok {
		return false, nil
	}
	q, err := o.query(g)
	if err != nil {
		return false, nil
	}
	v, err := g.openVault()
	if err != nil {
		return false, nil
	}
	if _, _, err := holdSetting(o.hold, v.Config()); err != nil {
		return false, nil
	}
	if o.checkAgent(g, v, q) != nil {
		return false, nil
	}
	if len(o.also) > 0 || v.Config().Search.Embeddings.Enabled() {
		return false, nil // fusion (package hybrid) is the full nexus's
	}
	c, err := holder.DialVault(v)
	if err != nil {
		return false, nil
	}
	defer c.Close()
	if info := c.Info(); info.Version != holder.Version && info.Yields {
		return false, nil // the full nexus asks it to step down and takes over
	}
	res, err := c.Search(g.ctx, q)
	if err != nil {
		return false, nil
	}
	recordSearch(g, v, q.Text, res)
	return true, g.emit(res, nil, func(w io.Writer) { printHits(w, res) })
}

// liteSearchOptions reads the stand-in's flags (forwardValue keeps each
// value as given) the way the full build's flags would parse them.
func liteSearchOptions(cmd *cobra.Command, args []string) (o searchFlags, ok bool) {
	if len(args) == 0 {
		return o, false // the full nexus's usage error
	}
	f := cmd.Flags()
	str := func(name string) string {
		if fl := f.Lookup(name); fl != nil {
			return fl.Value.String()
		}
		return ""
	}
	// An empty value is the flag's zero default (the table leaves those
	// out); a value is parsed as pflag parses it.
	limit, minScore := str("limit"), str("min-score")
	if limit != "" {
		n, err := strconv.ParseInt(limit, 0, 0)
		if err != nil {
			return o, false
		}
		o.limit = int(n)
	}
	if minScore != "" {
		x, err := strconv.ParseFloat(minScore, 64)
		if err != nil {
			return o, false
		}
		o.minScore = x
	}
	o.typ, o.tag, o.path = str("type"), str("tag"), str("path")
	o.since, o.until, o.by, o.hold = str("since"), str("until"), str("by"), str("hold")
	if f.Changed("also") { // the stand-in keeps the last; the full nexus reads them all
		o.also = []string{str("also")}
	}
	o.words, o.agentGiven = args, f.Changed("agent")
	return o, true
}
