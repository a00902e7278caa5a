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

// TestDefaultMonotonicIsGos: with neither WithMonotonic nor a clock
// implementing Monotonic (the system clock, a ManualClock), states age by
// Go's monotonic clock; a clock implementing it (a core.CoarseClock) is
// used. Catches: a default that reads the wall clock, or the stamps, or
// allocates, and a CoarseClock's decisions reading the clock after all.
// (The package's other tests build their limiters with mustNew, whose
// source is frozen unless they give one.)
func TestDefaultMonotonicIsGos(t *testing.T) {
	for _, clk := range []core.Clock{core.SystemClock{}, core.NewManualClock(epoch)} {
		cfg := defaultConfig()
		cfg.clock = clk
		m := monotonicOf(cfg)
		_, ok := m.(goMonotonic)
		require.True(t, ok, "clock %T: source %T, want Go's monotonic clock", clk, m)
		allocs := testing.AllocsPerRun(100, func() { m.MonotonicMillis() })
		require.Zero(t, allocs, "reading Go's monotonic clock allocates (the hot path reads it on every decision)")
	}
	cfg := defaultConfig()
	stepped := newSteppedClock(epoch)
	cfg.clock = stepped
	require.Equal(t, Monotonic(stepped), monotonicOf(cfg), "a clock implementing Monotonic is the default source")
	coarse := &core.CoarseClock{}
	cfg.clock = coarse
	require.Equal(t, Monotonic(coarse), monotonicOf(cfg), "a core.CoarseClock is the default source, so a decision reads no clock")
}
