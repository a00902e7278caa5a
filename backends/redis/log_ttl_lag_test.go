package redis

import (
	"context"
	"testing"
	"time"

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
// scripts do. With the lag in, three windows later the identity still got
// one unit per window, for a day.
func TestLogClockStepBackTTLHasNoLag(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.Limit{Max: 10, Window: time.Minute, Algorithm: core.SlidingLog}
	l := newLimiter(t, c, lim, WithPrefix("loglag"))
	w := lim.WindowMillis()
	t0 := core.Millis(time.Now())
	ahead := (t0+24*3600*1000)/w*w + w/2
	d, err := l.AllowN(ctx, "id", at(ahead), lim.Max-1)
	require.NoError(t, err)
	require.True(t, d.Allowed, "all but one unit a day ahead: %+v", d)
	d, err = l.AllowN(ctx, "id", at(t0), 1)
	require.NoError(t, err)
	require.True(t, d.Allowed, "the last unit at the corrected clock: %+v", d)
	ttl, err := c.PTTL(ctx, l.Key("id")).Result()
	require.NoError(t, err)
	assert.LessOrEqual(t, ttl, lim.Window+DefaultTimeout, "the key's TTL after a write at the corrected clock")

	expireBy(t, c, "*loglag*", core.Millis(time.Now())+2*w+DefaultTimeout.Milliseconds()+1000)
	d, err = l.AllowN(ctx, "id", at(t0+3*w), 2)
	require.NoError(t, err)
	assert.True(t, d.Allowed, "three windows after the correction: %+v", d)
}
