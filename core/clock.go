package core

import (
	"sync/atomic"
	"time"
)

// Clock tells the time. Limiters take one as an option (default SystemClock)
// so tests and the simulator can drive time explicitly.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock. Its zero value is ready to use.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when told to. Its zero value reads
// the Unix epoch. It is safe for concurrent use.
type ManualClock struct{ ns atomic.Int64 }

// NewManualClock returns a ManualClock set to t.
func NewManualClock(t time.Time) *ManualClock {
	c := &ManualClock{}
	c.Set(t)
	return c
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Millis converts t to integer milliseconds since the Unix epoch, the time
// unit of all the math in this package and of the Redis scripts.
func Millis(t time.Time) int64 { return t.UnixMilli() }
