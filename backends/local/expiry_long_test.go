package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// TestLongWindowsExpiry: a slot keeps its expiry in 32-bit whole seconds
// (136 years). A fixed window of core.MaxWindow (100 years) written in
// 2023 matters until its window ends in 2070, 47 years: its state expires
// one second past that plus the slack. The sliding window's state then
// matters for 147 years, which does not fit, so it is never forgotten by
// monotonic time, however far that runs (only by its stamps). Catches: an
// expiry that wraps past 2^32 seconds (the sliding state forgotten early),
// and a monotonic reading past 2^32 seconds that wraps instead of
// saturating (the fixed state held again).
func TestLongWindowsExpiry(t *testing.T) {
	const century = 100 * 365 * 24 * time.Hour
	for _, a := range []core.Algorithm{core.FixedWindow, core.SlidingWindow} {
		lim := core.Limit{Max: 1, Window: core.MaxWindow, Algorithm: a}
		var mono manualMonotonic
		l := mustNew(t, lim, WithMonotonic(&mono))
		d := mustAllow(t, l, "id", epoch, 1)
		require.True(t, d.Allowed)
		ttl := d.ResetAfter.Milliseconds() + expirySlackMillis
		fits := a == core.FixedWindow
		for _, at := range []int64{ttl, ttl + 1000, 2 * century.Milliseconds(), (1<<32 + 10) * 1000} {
			mono.ms.Store(at)
			_, held := l.State("id")
			require.Equal(t, at == ttl || !fits, held, "%s: held %d ms after a write whose time to live is %d ms", a, at, ttl)
		}
	}
}
