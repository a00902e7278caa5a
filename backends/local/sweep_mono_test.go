package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepDropsStatesExpiredByMonotonicTime: on a full shard of two, an
// identity spends its quota with the clock a day ahead, and the clock is
// put back. Another identity inserted within the spent state's lifetime
// plus slack (monotonic) leaves it held; one inserted a second after that
// sweeps it as expired, so the full shard makes room without an eviction
// (nothing live was lost). Catches: a sweep that judges by the stamps only
// (the state, a day ahead, is then evicted and counted), and one that drops
// a state not yet expired.
func TestSweepDropsStatesExpiredByMonotonicTime(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		clk := newSteppedClock(epoch.Add(24 * time.Hour))
		l := mustNew(t, lim, WithClock(clk), WithCapacity(2), WithShards(1))
		d, _ := l.AllowN(ctx, "spent", clk.Now(), 3)
		require.True(t, d.Allowed, "spending the quota: %+v", d)

		clk.Set(epoch)
		clk.advanceMono(lifetimeOf(lim) + expirySlackMillis*time.Millisecond)
		d, _ = l.Allow(ctx, "a")
		require.True(t, d.Allowed)
		_, held := l.State("spent")
		require.True(t, held, "a state within its lifetime plus slack was swept by another identity's insert")
		require.Equal(t, 2, l.Len())

		clk.advanceMono(time.Second)
		d, _ = l.Allow(ctx, "b")
		require.True(t, d.Allowed)
		require.Equal(t, uint64(0), l.Evictions(), "the expired state was evicted (counted) instead of swept")
		require.Equal(t, 2, l.Len())
		_, held = l.State("a")
		require.True(t, held, "the live identity a was dropped")
	})
}

// TestFarStampSweepsNothingLive: with a monotonic source, an identity
// spends its quota, then another identity's request stamped a day ahead
// (a caller's own time, or a clock that jumped) inserts its state. Its
// sweep must not drop the spent identity's state, which is live by
// monotonic time: the spent identity's next on-time request is denied as
// core and Redis deny it. Catches: the sweep judging other identities'
// states by the inserting request's stamp when states age by monotonic
// time (the spent state looked reset a day on, was dropped, and its
// identity admitted from zero).
func TestFarStampSweepsNothingLive(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		clk := newSteppedClock(epoch)
		l := mustNew(t, lim, WithClock(clk), WithCapacity(1024), WithShards(1))
		d, _ := l.AllowN(ctx, "spent", clk.Now(), 3)
		require.True(t, d.Allowed, "spending the quota: %+v", d)

		d, _ = l.AllowN(ctx, "far", clk.Now().Add(24*time.Hour), 1)
		require.True(t, d.Allowed)
		_, held := l.State("spent")
		require.True(t, held, "a request stamped a day ahead swept a state live by monotonic time")
		d, _ = l.AllowN(ctx, "spent", clk.Now(), 1)
		assert.False(t, d.Allowed, "the spent identity's on-time request: %+v, want denied", d)
	})
}
