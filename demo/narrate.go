package demo

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// narrator writes the story in plain words.
type narrator struct {
	w     io.Writer
	clock *storyClock
}

// scene starts a scene with a heading naming its story time.
func (n *narrator) scene(num int, title string) {
	fmt.Fprintf(n.w, "\n── Scene %d · %s ── %s\n", num, title, n.clock.Now().Format("Mon 2 Jan 2006, 15:04 UTC"))
}

// say narrates one step.
func (n *narrator) say(format string, a ...any) {
	fmt.Fprintf(n.w, "  "+format+"\n", a...)
}

// quote shows text an agent saw, indented, at most max lines.
func (n *narrator) quote(text string, max int) {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		if i == max {
			fmt.Fprintf(n.w, "    │ … (%d more lines)\n", len(lines)-max)
			break
		}
		fmt.Fprintf(n.w, "    │ %s\n", l)
	}
}

// done closes a scene with how long it took in real time.
func (n *narrator) done(d time.Duration) {
	fmt.Fprintf(n.w, "  ✓ %s\n", d.Round(time.Millisecond))
}
