package redis

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestBucketAtMaxMillisAgreesWithCore: a token bucket of the longest
// window, drained at the latest time accepted (core.MaxMillis: its TAT a
// window ahead, just below 2^53 µs), then asked for more units (peeked
// at, then counted), denies them with the RetryAfter core computes. The
// TAT those units would reach passes 2^53 µs, where a float64 holds only
// even integers: formed in bucket.lua, an odd one rounded and the wait
// came out 1 ms off core's, shorter for (1019 per window, 8 units) and
// longer for (1001, 892). It catches the script computing the units' end
// as TAT + units × interval before subtracting now.
func TestBucketAtMaxMillisAgreesWithCore(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, tc := range []struct{ max, n int64 }{{1019, 8}, {1001, 892}, {1007, 64}, {1, 1}} {
		lim := core.Limit{Max: tc.max, Window: core.MaxWindow, Algorithm: core.TokenBucket}
		l := newLimiter(t, c, lim)
		m := &model{limit: lim}
		now := core.MaxMillis
		want := m.decide(now, tc.max, true)
		got, err := l.AllowN(ctx, "latest", at(now), tc.max)
		require.NoError(t, err, "%v: AllowN(%d)", lim, tc.max)
		require.True(t, sameDecision(got, want), "%v: draining AllowN(%d):\n redis %+v\n go    %+v", lim, tc.max, got, want)
		want = m.decide(now, tc.n, false)
		got, err = l.PeekN(ctx, "latest", at(now), tc.n)
		require.NoError(t, err, "%v: PeekN(%d)", lim, tc.n)
		require.True(t, sameDecision(got, want), "%v: PeekN(%d) at core.MaxMillis:\n redis %+v\n go    %+v", lim, tc.n, got, want)
		want = m.decide(now, tc.n, true)
		got, err = l.AllowN(ctx, "latest", at(now), tc.n)
		require.NoError(t, err, "%v: AllowN(%d)", lim, tc.n)
		require.True(t, sameDecision(got, want), "%v: AllowN(%d) at core.MaxMillis:\n redis %+v\n go    %+v", lim, tc.n, got, want)
		require.False(t, got.Allowed, "%v: AllowN(%d) of a drained bucket: %+v", lim, tc.n, got)
	}
}
