package local

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// steppedClock is a wall clock that tests set and step at will (the
// embedded ManualClock) beside a monotonic reading that moves only when
// advanced, as a host's clocks behave when NTP steps the wall clock: it
// implements Monotonic, so WithClock alone makes the Limiter age states by
// it.
type steppedClock struct {
	*core.ManualClock
	mono atomic.Int64 // ms
}

func newSteppedClock(t time.Time) *steppedClock {
	return &steppedClock{ManualClock: core.NewManualClock(t)}
}

// MonotonicMillis implements Monotonic.
func (c *steppedClock) MonotonicMillis() int64 { return c.mono.Load() }

// advanceMono moves the monotonic reading forward by d; the wall clock
// stays where it is.
func (c *steppedClock) advanceMono(d time.Duration) { c.mono.Add(d.Milliseconds()) }

// lifetimeOf is how long a state written at a window's start matters: two
// windows for the sliding window, one for the others (the log's newest
// stamp plus the window, the bucket's burst of Max units at the window's
// rate).
func lifetimeOf(l core.Limit) time.Duration {
	if l.Algorithm == core.SlidingWindow {
		return 2 * l.Window
	}
	return l.Window
}

// TestClockPutBackLocksOutOnlyForTheLifetime: with the wall clock a day
// ahead an identity spends its quota at the start of a window; the clock is
// put back by that day. The state, stamped a day ahead, denies the
// identity's requests while the monotonic time since its last write is
// within its lifetime plus the expiry slack (as the Redis backend's key
// lives that long), and no denied request stretches that; one second of
// monotonic time later it has been forgotten and the identity is admitted
// again. Catches: aging states by stamps only (denied for the whole day),
// refreshing the expiry on a denied request or a peek, forgetting before
// the lifetime plus slack has passed, rounding the expiry up by more than
// a second.
func TestClockPutBackLocksOutOnlyForTheLifetime(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		clk := newSteppedClock(epoch.Add(24 * time.Hour))
		l := mustNew(t, lim, WithClock(clk))
		for i := 0; i < 3; i++ {
			d, err := l.Allow(ctx, "id")
			require.NoError(t, err)
			require.True(t, d.Allowed, "request %d of the quota, clock a day ahead: %+v", i+1, d)
		}
		d, _ := l.Allow(ctx, "id")
		require.False(t, d.Allowed, "request past the quota admitted: %+v", d)

		clk.Set(epoch) // NTP steps the clock back by the day
		ttl := lifetimeOf(lim) + time.Duration(expirySlackMillis)*time.Millisecond
		for _, step := range []time.Duration{0, ttl / 2, ttl - ttl/2} {
			clk.advanceMono(step)
			d, _ := l.Allow(ctx, "id")
			require.False(t, d.Allowed, "%v ms of monotonic time after the last write (lifetime + slack %v), clock put back: %+v, want still denied", clk.mono.Load(), ttl, d)
			p, _ := l.Peek(ctx, "id", clk.Now())
			require.False(t, p.Allowed, "peek %v ms after the last write: %+v, want still denied", clk.mono.Load(), p)
		}
		clk.advanceMono(time.Second)
		d, _ = l.Allow(ctx, "id")
		require.True(t, d.Allowed, "%v ms of monotonic time after the last write (lifetime + slack %v), clock put back: %+v, want admitted as Redis' expired key would", clk.mono.Load(), ttl, d)
		want := coreModel(lim)(clk.Now(), 1, true)
		require.Equal(t, want, d, "the first request after the state was forgotten is decided from the zero state")
	})
}
