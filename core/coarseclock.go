package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// MilliClock is a Clock that also tells the time as Unix milliseconds, the
// unit of every limiter's math, without building a time.Time. A limiter
// whose clock implements it reads UnixMilli on its hot path; UnixMilli must
// equal Millis(Now()) read at the same instant. SystemClock, *ManualClock
// and *CoarseClock implement it.
type MilliClock interface {
	Clock
	UnixMilli() int64
}

// Bounds of NewCoarseClock's resolution.
const (
	MinCoarseResolution = time.Millisecond
	MaxCoarseResolution = time.Second
)

// CoarseClock is a Clock that serves the wall time a background goroutine
// stores every resolution, so a read is one atomic load: no clock read on the
// caller's path. This is the cached time of nginx's and Envoy's event loops,
// for a limiter deciding millions of times a second: reading the clock
// (kvm-clock's vDSO waits for the loads before it) is a large part of a
// decision that otherwise costs a few cache misses.
//
// It trades freshness for that: a reading lags the wall clock by up to the
// resolution, plus however late the Go scheduler runs the refresh (a busy
// process delays timers by milliseconds, rarely more). Readings are whole
// milliseconds. Like SystemClock's, they follow a step of the wall clock,
// backwards too. The limiters tolerate a clock that lags or steps back (see
// core.WindowState); a lag of a few ms shifts a window's edges by that much.
//
// The zero value is ready to use and reads like SystemClock (it runs no
// goroutine); so does a CoarseClock after Stop, never a frozen time. Build
// a refreshing one with NewCoarseClock. It is safe for concurrent use.
type CoarseClock struct {
	_    [64]byte     // keeps ms on a cache line of its own
	ms   atomic.Int64 // Unix ms of the last refresh; 0: not refreshing
	_    [56]byte
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// ErrBadResolution is returned by NewCoarseClock for a resolution outside
// [MinCoarseResolution, MaxCoarseResolution]; it matches ErrInvalid.
var ErrBadResolution = &InputError{"coarse clock resolution must be between 1ms and 1s"}

// NewCoarseClock returns a CoarseClock refreshed every resolution by a
// goroutine of its own, which runs until Stop. It returns ErrBadResolution
// (matching ErrInvalid) and starts nothing for a resolution outside
// [MinCoarseResolution, MaxCoarseResolution].
func NewCoarseClock(resolution time.Duration) (*CoarseClock, error) {
	if resolution < MinCoarseResolution || resolution > MaxCoarseResolution {
		return nil, ErrBadResolution
	}
	c := &CoarseClock{stop: make(chan struct{}), done: make(chan struct{})}
	c.ms.Store(SystemClock{}.UnixMilli())
	go c.refresh(resolution)
	return c, nil
}

// refresh stores the time every resolution until Stop.
func (c *CoarseClock) refresh(resolution time.Duration) {
	t := time.NewTicker(resolution)
	defer t.Stop()
	defer close(c.done)
	for {
		select {
		case <-t.C:
			c.ms.Store(SystemClock{}.UnixMilli())
		case <-c.stop:
			c.ms.Store(0)
			return
		}
	}
}

// UnixMilli returns the Unix milliseconds stored at the last refresh, or
// SystemClock's reading when the clock is not refreshing (zero value,
// stopped).
func (c *CoarseClock) UnixMilli() int64 {
	if ms := c.ms.Load(); ms != 0 {
		return ms
	}
	return SystemClock{}.UnixMilli()
}

// Now returns UnixMilli as a time.Time.
func (c *CoarseClock) Now() time.Time { return time.UnixMilli(c.UnixMilli()) }

// Stop ends the refresh goroutine and waits for it; later reads are
// SystemClock's. Stop on the zero value, or twice, does nothing more.
func (c *CoarseClock) Stop() {
	if c.stop == nil {
		return
	}
	c.once.Do(func() {
		close(c.stop)
		<-c.done
	})
}
