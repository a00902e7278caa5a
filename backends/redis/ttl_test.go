package redis

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// expectedTTL is how long a key written by one unit at now (ms) should live
// by the package doc, before slack, after n units at now (ms).
func expectedTTL(lim core.Limit, now, n int64) time.Duration {
	w := lim.WindowMillis()
	ms := map[core.Algorithm]int64{
		core.SlidingWindow: (now/w+2)*w - now,
		core.FixedWindow:   (now/w+1)*w - now,
		core.SlidingLog:    w,
		core.TokenBucket:   (n*w*1000 + lim.Max*1000 - 1) / (lim.Max * 1000), // n intervals of W/Max, rounded up to ms
	}[lim.Algorithm]
	return time.Duration(ms) * time.Millisecond
}

// TestTTLOnEveryKey: every key a decision writes has the TTL the package doc
// promises (plus the slack), a peek writes no key, and keys vanish by
// themselves.
func TestTTLOnEveryKey(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, slack := range []time.Duration{0, 5 * time.Second} {
		for _, lim := range everyLimit(core.PerWindow(10, 30*time.Second)) {
			l := newLimiter(t, c, lim, WithExpirySlack(slack))
			now := time.Now()
			_, err := l.Peek(ctx, "ttl", now)
			require.NoError(t, err)
			n := dbsize(t, c)
			require.Equal(t, int64(0), n, "%s: a peek created %d keys", lim, n)
			// The script sets the TTL relative to Redis' clock when it runs:
			// the key's expiry time is that clock plus the TTL, so it lies
			// between Redis' TIME before and after the call plus the TTL
			// (readings of one clock around the call, no slack needed).
			before, err := c.Time(ctx).Result()
			require.NoError(t, err)
			_, err = l.AllowN(ctx, "ttl", now, 3)
			require.NoError(t, err)
			after, err := c.Time(ctx).Result()
			require.NoError(t, err)
			at, err := c.PExpireTime(ctx, l.Key("ttl")).Result()
			require.NoError(t, err)
			want := expectedTTL(lim, core.Millis(now), 3) + slack
			lo := time.Duration(before.UnixMilli())*time.Millisecond + want
			hi := time.Duration(after.UnixMilli()+1)*time.Millisecond + want
			if assert.GreaterOrEqual(t, at, lo, "%s slack %s: expires at %d ms, want Redis' time at the call plus %s, in [%d, %d]", lim, slack, at.Milliseconds(), want, lo.Milliseconds(), hi.Milliseconds()) {
				assert.LessOrEqual(t, at, hi, "%s slack %s: expires at %d ms, want Redis' time at the call plus %s, in [%d, %d]", lim, slack, at.Milliseconds(), want, lo.Milliseconds(), hi.Milliseconds())
			}
			err = l.Reset(ctx, "ttl")
			require.NoError(t, err)
			n = dbsize(t, c)
			require.Equal(t, int64(0), n, "%s: Reset left %d keys", lim, n)
		}
	}
}

// TestIdleIdentitiesLeaveNothing: with a 50 ms window and no expiry slack,
// every algorithm's key is gone 300 ms after the last request; with the
// default slack (the timeout, here 100 ms), 400 ms after. Each key goes
// by its TTL: after the wait no key is listed, and Redis' expired_keys
// grew by the four keys written (a key never written cannot expire, one
// deleted otherwise is not counted). The writes are not timed: on a loaded
// machine a key may expire before the last one is written, which the
// count still sees (a DBSIZE right after the writes did not).
//
// It catches a script that writes a key without a TTL (listed after the
// wait) or with one longer than its window's reach plus the slack, and a
// limiter that writes nothing (expired_keys short).
func TestIdleIdentitiesLeaveNothing(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opt  Option
		wait time.Duration
	}{{WithExpirySlack(0), 300 * time.Millisecond}, {WithTimeout(100 * time.Millisecond), 400 * time.Millisecond}} {
		before := expiredKeys(t, c)
		var names []string
		for _, lim := range everyLimit(core.PerWindow(5, 50*time.Millisecond)) {
			l := newLimiter(t, c, lim, tc.opt)
			for i := 0; i < 3; i++ {
				_, err := l.Allow(ctx, "idle")
				require.NoError(t, err)
			}
			names = append(names, l.Key("idle"))
		}
		// Redis' clock runs the TTLs, and it cannot be injected: the test
		// waits past them. KEYS checks each key's expiry as it lists them,
		// so a key past its TTL that Redis' background expiry has not
		// reclaimed yet (DBSIZE still counts it) is not listed.
		time.Sleep(tc.wait)
		keys, err := c.Keys(ctx, "*").Result()
		require.NoError(t, err)
		require.Empty(t, keys, "keys %q still live %s after the last request, want none", keys, tc.wait)
		// EXISTS deletes a key past its TTL that background expiry has not
		// reclaimed yet, counting it in expired_keys
		n, err := c.Exists(ctx, names...).Result()
		require.NoError(t, err)
		require.Zero(t, n, "keys %q: %d still exist", names, n)
		assert.Equal(t, int64(len(names)), expiredKeys(t, c)-before, "keys %q: every one written and gone by its TTL", names)
	}
}

// expiredKeys is Redis' count of keys deleted by their TTL (INFO stats).
func expiredKeys(t *testing.T, c *goredis.Client) int64 {
	t.Helper()
	info, err := c.Info(context.Background(), "stats").Result()
	require.NoError(t, err, "INFO stats")
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "expired_keys:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err, "expired_keys %q", v)
			return n
		}
	}
	require.FailNow(t, "INFO stats has no expired_keys", "%q", info)
	return 0
}

// TestPeekAndReset: a peek counts nothing and reports the quota before
// spending; Reset forgets the identity.
func TestPeekAndReset(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	now := time.UnixMilli(windowZero + 500)
	for _, lim := range everyLimit(core.PerWindow(4, time.Minute)) {
		l := newLimiter(t, c, lim)
		for i := 0; i < 3; i++ {
			d, err := l.Peek(ctx, "p", now)
			require.NoError(t, err, "%s: fresh peek %+v %v, want allowed with 4 remaining", lim, d, err)
			require.True(t, d.Allowed, "%s: fresh peek %+v %v, want allowed with 4 remaining", lim, d, err)
			require.Equal(t, int64(4), d.Remaining, "%s: fresh peek %+v %v, want allowed with 4 remaining", lim, d, err)
		}
		_, err := l.AllowN(ctx, "p", now, 4)
		require.NoError(t, err)
		d, _ := l.Peek(ctx, "p", now)
		assert.False(t, d.Allowed, "%s: peek after spending all: %+v", lim, d)
		assert.Equal(t, int64(0), d.Remaining, "%s: peek after spending all: %+v", lim, d)
		assert.Greater(t, d.RetryAfter, time.Duration(0), "%s: peek after spending all: %+v", lim, d)
		err = l.Reset(ctx, "p")
		require.NoError(t, err)
		d, _ = l.AllowN(ctx, "p", now, 4)
		assert.True(t, d.Allowed, "%s: denied after Reset: %+v", lim, d)
	}
}
