package retention

import "github.com/nexus-memory/nexus/livelog"

// keepTimeline brings log/timeline.local.md, the derived view of the live
// log for Obsidian, in step with the feeds. It rewrites the file only when
// its text changed, and writes none while the log is empty.
func (k *Keeper) keepTimeline() {
	l, err := livelog.Open(k.v, livelog.Options{Now: k.opts.Now})
	if err != nil {
		k.opts.Logger.Warn("open the live log for the timeline", "err", err)
		return
	}
	if _, err := l.WriteTimeline(0); err != nil {
		k.opts.Logger.Warn("write the timeline", "err", err)
	}
}
