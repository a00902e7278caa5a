package core

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// MinCoarseResolution and MaxCoarseResolution bound NewCoarseClock's
// resolution.
const (
	MinCoarseResolution = time.Millisecond
	MaxCoarseResolution = time.Second
)

// CoarseClock is a Clock that serves the wall time a background goroutine
// stores every resolution, so a read is two loads (the clock's pointer and
// the time): no clock read on the caller's path. This is the cached time of
// nginx's and Envoy's event loops, for a limiter deciding millions of times
// a second, where reading the clock (kvm-clock's vDSO, about 28 ns, waits
// for the loads before it) is part of every decision. Measure before
// choosing it: on a shared 2-core VM its effect on a decision was within
// the noise (docs/tradeoffs.md §9), and its goroutine wakes every
// resolution.
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
// a refreshing one with NewCoarseClock, and Stop it when done; one dropped
// without Stop stops its goroutine once the garbage collector finds it
// unreachable. It is safe for concurrent use.
type CoarseClock struct {
	t *coarseTicker // nil: the zero value
}

// coarseTicker is a CoarseClock's refreshed time and its goroutine, kept
// apart from the CoarseClock so the goroutine does not keep it reachable.
type coarseTicker struct {
	_    [64]byte     // keeps ms and mono on a cache line of their own
	ms   atomic.Int64 // Unix ms of the last refresh; 0: not refreshing
	mono atomic.Int64 // monoMillis() at the last refresh
	_    [48]byte
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// ErrBadResolution is returned by NewCoarseClock for a resolution outside
// [MinCoarseResolution, MaxCoarseResolution]; it matches ErrInvalid.
var ErrBadResolution = &InputError{"coarse clock resolution must be between 1ms and 1s"}

// NewCoarseClock returns a CoarseClock refreshed every resolution by a
// goroutine of its own, which runs until Stop (or until the clock is
// garbage). It returns ErrBadResolution (matching ErrInvalid) and starts
// nothing for a resolution outside [MinCoarseResolution,
// MaxCoarseResolution].
func NewCoarseClock(resolution time.Duration) (*CoarseClock, error) {
	if resolution < MinCoarseResolution || resolution > MaxCoarseResolution {
		return nil, ErrBadResolution
	}
	t := &coarseTicker{stop: make(chan struct{}), done: make(chan struct{})}
	t.store()
	go t.refresh(resolution)
	c := &CoarseClock{t: t}
	runtime.AddCleanup(c, (*coarseTicker).halt, t)
	return c, nil
}

// refresh stores the time every resolution until halted.
func (t *coarseTicker) refresh(resolution time.Duration) {
	tick := time.NewTicker(resolution)
	defer tick.Stop()
	defer close(t.done)
	for {
		select {
		case <-tick.C:
			t.store()
		case <-t.stop:
			t.ms.Store(0)
			return
		}
	}
}

// store takes the readings UnixMilli and MonotonicMillis serve.
func (t *coarseTicker) store() {
	t.mono.Store(monoMillis())
	t.ms.Store(SystemClock{}.UnixMilli())
}

// halt tells refresh to end, once, without waiting for it.
func (t *coarseTicker) halt() { t.once.Do(func() { close(t.stop) }) }

// UnixMilli returns the Unix milliseconds stored at the last refresh, or
// SystemClock's reading when the clock is not refreshing (zero value,
// stopped).
func (c *CoarseClock) UnixMilli() int64 {
	if c.t != nil {
		if ms := c.t.ms.Load(); ms != 0 {
			return ms
		}
	}
	return SystemClock{}.UnixMilli()
}

// MonotonicMillis returns the milliseconds of Go's monotonic clock since
// the process started (a fixed origin), stored at the last refresh like
// UnixMilli's reading, or read now when the clock is not refreshing. A step
// of the wall clock does not move it, and one goroutine's readings never
// decrease, across Stop too. The local
// backend ages its states by it when the clock is given to it (its
// Monotonic interface), so the decision reads no clock.
func (c *CoarseClock) MonotonicMillis() int64 {
	if c.t != nil && c.t.ms.Load() != 0 {
		return c.t.mono.Load()
	}
	return monoMillis()
}

// Now returns UnixMilli as a time.Time.
func (c *CoarseClock) Now() time.Time { return time.UnixMilli(c.UnixMilli()) }

// Stop ends the refresh goroutine and waits for it; later reads are
// SystemClock's. Stop on the zero value, or twice, does nothing more.
func (c *CoarseClock) Stop() {
	if c.t == nil {
		return
	}
	c.t.halt()
	<-c.t.done
}
