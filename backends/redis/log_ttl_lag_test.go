package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLogClockStepBackTTLHasNoLag: the log spends all but one unit at
// stamps a day ahead, the clock is corrected, and one unit is spent at
// once at the corrected clock (counted in the day-ahead state). The key's
// TTL must not take the day's lag in: at most the log's lifetime (a
// window) plus the slack after the write, as the sliding and fixed
// scripts now do, and as the local backend assumes (it forgets the state
// a window plus 1 s before it). With the lag in, three windows later the
// identity still gets one unit per window, for a day.
func TestLogClockStepBackTTLHasNoLag(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.Limit{Max: 10, Window: time.Minute, Algorithm: core.SlidingLog}
	l := newLimiter(t, c, lim, WithPrefix("loglag"))
	ll, err := local.New(lim)
	require.NoError(t, err)
	w := lim.WindowMillis()
	t0 := core.Millis(time.Now())
	ahead := (t0+24*3600*1000)/w*w + w/2
	for name, x := range map[string]core.Limiter{"redis": l, "local": ll} {
		d, err := x.AllowN(ctx, "id", at(ahead), lim.Max-1)
		require.NoError(t, err)
		require.True(t, d.Allowed, "%s: %+v", name, d)
		d, err = x.AllowN(ctx, "id", at(t0), 1)
		require.NoError(t, err)
		require.True(t, d.Allowed, "%s: %+v", name, d)
	}
	ttl, err := c.PTTL(ctx, l.Key("id")).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, ttl, lim.Window+DefaultTimeout, "the key's TTL after a write at the corrected clock")

	expireBy(t, c, "*loglag*", core.Millis(time.Now())+2*w+DefaultTimeout.Milliseconds()+1000)
	later := at(t0 + 3*w)
	dr, err := l.AllowN(ctx, "id", later, 2)
	require.NoError(t, err)
	dl, err := ll.AllowN(ctx, "id", later, 2)
	require.NoError(t, err)
	assert.True(t, dr.Allowed, "redis, three windows after the correction: %+v", dr)
	assert.True(t, sameDecision(dr, dl), "three windows after the correction: redis %+v, local %+v", dr, dl)
}
