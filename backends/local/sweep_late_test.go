package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepKeepsStateALateRequestNeeds: the idle sweep of an insert judges
// the LRU's oldest entries at the inserting request's now. A request of
// another identity stamped 1 ms later than a spent identity's state end
// drops that state (no eviction counted), and a request of the spent
// identity stamped 1 ms earlier — two goroutines that read the clock in one
// order and took the shard lock in the other — is then admitted from zero,
// where core's math on the same history (and the Redis backend, whose keys
// outlive their state by the expiry slack) denies it.
func TestSweepKeepsStateALateRequestNeeds(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		l := mustNew(t, lim, WithCapacity(1024), WithShards(1))
		t0 := epoch.Add(999 * time.Millisecond) // the last ms of window 0
		d := mustAllow(t, l, "spent", t0, 3)
		require.True(t, d.Allowed)
		end := t0.Add(d.ResetAfter) // where "spent"'s state has fully reset

		// The model: core's math on the history as the limiter saw it.
		var ws core.WindowState
		var bs core.BucketState
		var ls core.LogState
		decide := func(now time.Time, n int64) core.Decision {
			switch a {
			case core.FixedWindow:
				return ws.DecideFixed(lim, core.Millis(now), n, true)
			case core.SlidingLog:
				return ls.Decide(lim, core.Millis(now), n, true)
			case core.TokenBucket:
				return bs.Decide(lim, core.Millis(now), n, true)
			}
			return ws.DecideSliding(lim, core.Millis(now), n, true)
		}
		decide(t0, 3)

		mustAllow(t, l, "other", end, 1) // its insert sweeps the tail
		late := end.Add(-time.Millisecond)
		want := decide(late, 1)
		got := mustAllow(t, l, "spent", late, 1)
		assert.Equal(t, want.Allowed, got.Allowed, "%s: request stamped %s, 1 ms before its state's end, after another identity's at the end: local %+v, core %+v (evictions %d)",
			a, late.Sub(epoch), got, want, l.Evictions())
	})
}
