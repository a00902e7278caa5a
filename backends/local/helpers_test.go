package local

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

// epoch is aligned to every window used in these tests.
var epoch = time.Unix(1_700_006_400, 0)

// mustNew builds a Limiter whose states age by a monotonic source frozen
// at zero unless opts give one (WithMonotonic, or a clock implementing
// Monotonic): decided on stamps alone, as core's math is, so the real time
// a test takes on a loaded machine never forgets a state it still needs.
// The tests of aging give their own source.
func mustNew(t testing.TB, l core.Limit, opts ...Option) *Limiter {
	t.Helper()
	cfg := defaultConfig()
	for _, o := range opts {
		if o(&cfg) != nil {
			break // New reports it
		}
	}
	// Tests stamp their requests themselves (AllowN on fixed times): their
	// states age by a frozen source unless the test gives one, WithMonotonic
	// or a clock of its own implementing Monotonic (the system clock's is
	// real time, which a loaded machine's stalls would advance).
	if _, own := cfg.clock.(Monotonic); cfg.mono == nil && (!own || cfg.clock == core.Clock(core.SystemClock{})) {
		opts = append([]Option{WithMonotonic(frozen{})}, opts...)
	}
	lim, err := New(l, opts...)
	require.NoError(t, err, "New(%v)", l)
	return lim
}

func mustAllow(t testing.TB, l *Limiter, key string, now time.Time, n int64) core.Decision {
	t.Helper()
	d, err := l.AllowN(ctx, key, now, n)
	// Guarded: require's message arguments would be boxed on every call,
	// and TestHotPathAllocatesNothing counts this helper's allocations.
	if err != nil {
		require.NoError(t, err, "AllowN(%q, %d)", key, n)
	}
	return d
}

// eachAlgorithm runs f as a subtest per algorithm.
func eachAlgorithm(t *testing.T, f func(t *testing.T, a core.Algorithm)) {
	for _, a := range core.Algorithms {
		t.Run(a.String(), func(t *testing.T) { f(t, a) })
	}
}

// coreModel returns core's math for one identity under lim: the reference
// a Limiter's decisions must equal for the same history.
func coreModel(lim core.Limit) func(now time.Time, n int64, commit bool) core.Decision {
	var ws core.WindowState
	var bs core.BucketState
	var ls core.LogState
	return func(now time.Time, n int64, commit bool) core.Decision {
		switch lim.Algorithm {
		case core.FixedWindow:
			return ws.DecideFixed(lim, core.Millis(now), n, commit)
		case core.SlidingLog:
			return ls.Decide(lim, core.Millis(now), n, commit)
		case core.TokenBucket:
			return bs.Decide(lim, core.Millis(now), n, commit)
		}
		return ws.DecideSliding(lim, core.Millis(now), n, commit)
	}
}
