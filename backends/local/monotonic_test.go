package local

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// manualMonotonic is a Monotonic that moves only when advanced.
type manualMonotonic struct{ ms atomic.Int64 }

func (m *manualMonotonic) MonotonicMillis() int64 { return m.ms.Load() }

// TestWithMonotonicWins: WithMonotonic's source ages the states even when
// the clock implements Monotonic too: advancing the clock's reading forgets
// nothing, advancing the option's past the lifetime plus slack forgets the
// spent state. Catches: preferring the clock's reading over the option's.
func TestWithMonotonicWins(t *testing.T) {
	lim := core.PerWindow(1, time.Second)
	clk := newSteppedClock(epoch)
	var mono manualMonotonic
	mono.ms.Store(5000) // an origin other than zero: readings count from New's
	l := mustNew(t, lim, WithClock(clk), WithMonotonic(&mono))
	d, _ := l.Allow(ctx, "id")
	require.True(t, d.Allowed)
	clk.advanceMono(time.Hour)
	_, held := l.State("id")
	require.True(t, held, "the clock's monotonic reading aged the state though WithMonotonic gave another source")
	mono.ms.Add(lifetimeOf(lim).Milliseconds() + expirySlackMillis)
	_, held = l.State("id")
	require.True(t, held, "forgotten at the end of its lifetime plus slack, not after it")
	mono.ms.Add(1000)
	_, held = l.State("id")
	require.False(t, held, "held past its lifetime plus slack and a second of WithMonotonic's source")
}

// TestDefaultMonotonic: the system clock (the default) is its own source,
// Go's monotonic clock, read without allocating, and Allow reads it once
// with the stamp; a clock implementing Monotonic (a core.CoarseClock, a
// test's stepped clock) is the source; a clock that does not (a
// ManualClock) gives a frozen source, so a limiter driven by an injected
// clock never ages its states by real time behind it. Catches: a default
// that reads the wall clock, or allocates; a CoarseClock's decisions
// reading the clock after all; a ManualClock's limiter aged by real time;
// Allow reading the two clocks apart on the default clock.
// (The package's other tests build their limiters with mustNew, whose
// source is frozen unless they give one.)
func TestDefaultMonotonic(t *testing.T) {
	cfg := defaultConfig()
	m := monotonicOf(cfg)
	require.Equal(t, Monotonic(core.SystemClock{}), m, "the default clock is the default source")
	allocs := testing.AllocsPerRun(100, func() { m.MonotonicMillis() })
	require.Zero(t, allocs, "reading Go's monotonic clock allocates (the hot path reads it on every decision)")
	l, err := New(core.PerWindow(1, time.Second))
	require.NoError(t, err)
	require.True(t, l.sys, "Allow on the default clock reads stamp and monotonic time at once")
	l, err = New(core.PerWindow(1, time.Second), WithMonotonic(&manualMonotonic{}))
	require.NoError(t, err)
	require.False(t, l.sys, "WithMonotonic's source is read, not the system clock's")

	cfg.clock = core.NewManualClock(epoch)
	require.Equal(t, Monotonic(frozen{}), monotonicOf(cfg), "a ManualClock's limiter ages states by its stamps alone")
	stepped := newSteppedClock(epoch)
	cfg.clock = stepped
	require.Equal(t, Monotonic(stepped), monotonicOf(cfg), "a clock implementing Monotonic is the default source")
	coarse := &core.CoarseClock{}
	cfg.clock = coarse
	require.Equal(t, Monotonic(coarse), monotonicOf(cfg), "a core.CoarseClock is the default source, so a decision reads no clock")
}
