package redis

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerTime: under WithServerTime the caller's now is ignored (here a
// date in 2001) and windows follow Redis' TIME; so is a zero time, which
// is not refused there (core.CheckTime reads a time only where it is used).
func TestServerTime(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.Limit{Max: 3, Window: time.Hour, Algorithm: core.FixedWindow}
	l := newLimiter(t, c, lim, WithServerTime())
	wrong := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 4; i++ {
		d, err := l.AllowN(ctx, "st", wrong, 1)
		require.NoError(t, err)
		require.Equal(t, i < 3, d.Allowed, "request %d: %+v", i, d)
	}
	server, err := c.Time(ctx).Result()
	require.NoError(t, err)
	v, err := c.Get(ctx, l.Key("st")).Result()
	require.NoError(t, err)
	idx, _ := strconv.ParseInt(strings.Split(v, ":")[0], 10, 64)
	want := server.UnixMilli() / lim.WindowMillis()
	assert.Equal(t, want, idx, "stored window %d, Redis' clock says %d (caller's: %d)", idx, want, core.Millis(wrong)/lim.WindowMillis())
	_, err = l.AllowN(ctx, "zero", time.Time{}, 1)
	require.NoError(t, err, "the zero time is not read under WithServerTime")
	d, _ := l.Peek(ctx, "st", wrong)
	rest := time.Duration(lim.WindowMillis()-server.UnixMilli()%lim.WindowMillis()) * time.Millisecond
	if assert.LessOrEqual(t, d.ResetAfter, rest, "ResetAfter %s, want about %s by Redis' clock", d.ResetAfter, rest) {
		assert.GreaterOrEqual(t, d.ResetAfter, rest-time.Second, "ResetAfter %s, want about %s by Redis' clock", d.ResetAfter, rest)
	}
}

// TestServerTimeEveryAlgorithm: each script reads TIME and still admits
// exactly Max at once.
func TestServerTimeEveryAlgorithm(t *testing.T) {
	c, _ := redistest.Client(t)
	for _, lim := range everyLimit(core.PerWindow(5, time.Hour)) {
		l := newLimiter(t, c, lim, WithServerTime())
		admitted := 0
		for i := 0; i < 8; i++ {
			d, err := l.AllowN(context.Background(), "st", time.Unix(0, 0), 1)
			require.NoError(t, err)
			if d.Allowed {
				admitted++
			}
		}
		assert.Equal(t, 5, admitted, "%s: admitted %d of 8, want 5", lim, admitted)
		ttl, _ := c.PTTL(context.Background(), l.Key("st")).Result()
		assert.Greater(t, ttl, time.Duration(0), "%s: PTTL %s under server time", lim, ttl)
	}
}
