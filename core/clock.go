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

// SystemClock is the wall clock, read cheaply. Its zero value is ready to
// use.
//
// time.Now reads two clocks (wall and monotonic), and each read waits for
// the instructions before it to finish, which on a limiter's hot path (a few
// cache misses per decision) costs more than the read itself. SystemClock
// reads only the monotonic clock and adds the wall-minus-monotonic offset
// that time.Now gave at most a second earlier. The two clocks run at the
// same rate (NTP slews both), so the result equals time.Now's wall time
// except for up to one second after the wall clock is stepped: during that
// second it keeps counting from before the step, and then it takes the
// step (backwards too, if the wall clock went back).
type SystemClock struct{}

// Now returns the wall time (see SystemClock), without a monotonic reading.
func (SystemClock) Now() time.Time { return time.Unix(0, wallNanos()) }

// UnixMilli returns Millis(Now()) without building a time.Time (see
// MilliClock).
func (SystemClock) UnixMilli() int64 { return floorDiv(wallNanos(), int64(time.Millisecond)) }

// MonotonicMillis returns the milliseconds of Go's monotonic clock since
// the process started (a fixed origin): a step of the wall clock does not
// move it. The local backend ages its states by it (its Monotonic
// interface), as Redis ages a key by its TTL.
func (SystemClock) MonotonicMillis() int64 { return monoMillis() }

// Stamps returns UnixMilli and MonotonicMillis from one read of the
// monotonic clock: what a limiter that stamps a request and ages its state
// needs, at the cost of one read.
func (SystemClock) Stamps() (unixMilli, monoMillis int64) {
	wall, m := wallAndMono()
	return floorDiv(wall, int64(time.Millisecond)), m / int64(time.Millisecond)
}

// monoBase is the origin of the monotonic readings wallNanos takes.
var monoBase = time.Now()

// monoMillis returns the milliseconds of Go's monotonic clock since
// monoBase.
func monoMillis() int64 { return int64(time.Since(monoBase) / time.Millisecond) }

// wallAt holds the monotonic reading (ns since monoBase) at which
// wallOffset, the wall clock's Unix nanoseconds minus that reading, was last
// taken from time.Now. Two writers racing store two valid offsets.
var wallAt, wallOffset atomic.Int64

// wallNanos returns the wall clock's Unix nanoseconds from one monotonic
// read (wallAndMono).
func wallNanos() int64 {
	wall, _ := wallAndMono()
	return wall
}

// wallAndMono returns the wall clock's Unix nanoseconds and the monotonic
// nanoseconds since monoBase it was computed from, from one monotonic
// read, refreshing the offset from time.Now once it is a second old.
func wallAndMono() (wall, mono int64) {
	m := int64(time.Since(monoBase)) // monotonic only
	if at := wallAt.Load(); m-at >= int64(time.Second) || at == 0 {
		now := time.Now()
		m = int64(now.Sub(monoBase))
		wallOffset.Store(now.UnixNano() - m)
		wallAt.Store(max(m, 1))
		return now.UnixNano(), m
	}
	return m + wallOffset.Load(), m
}

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

// UnixMilli returns Millis(Now()) (see MilliClock).
func (c *ManualClock) UnixMilli() int64 { return floorDiv(c.ns.Load(), int64(time.Millisecond)) }

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Millis converts t to integer milliseconds since the Unix epoch, the time
// unit of all the math in this package and of the Redis scripts.
func Millis(t time.Time) int64 { return t.UnixMilli() }
