package demo

import (
	"sync"
	"time"
)

// storyClock is the clock the demo's server runs on: set to a moment of the
// story ("02:00 on 13 January"), it then runs forward in real time, so the
// entries of a scene keep their order.
type storyClock struct {
	mu    sync.Mutex // protects base and setAt
	base  time.Time  // story time at setAt
	setAt time.Time  // real time of the last set
	real  func() time.Time
}

func newStoryClock(real func() time.Time, start time.Time) *storyClock {
	return &storyClock{base: start.UTC(), setAt: real(), real: real}
}

// Now returns the story time.
func (c *storyClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base.Add(c.real().Sub(c.setAt))
}

// set moves the story to t. The story never goes back: a t before the
// current story time is ignored, so the log stays in time order.
func (c *storyClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.base.Add(c.real().Sub(c.setAt))
	if t.Before(now) {
		return
	}
	c.base, c.setAt = t.UTC(), c.real()
}
