package redis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBucketedLateRequestCountsInItsWindow: on the bucketed layout, a
// request stamped inside a window whose quota is spent but run at Redis
// 50 ms after that state's end by the stamps is counted against it and
// denied under the default slack (the timeout), as with one key per
// identity; with no slack the window hash is gone and the same request is
// admitted from zero, which is what the slack is for.
func TestBucketedLateRequestCountsInItsWindow(t *testing.T) {
	c, _ := redistest.Client(t)
	for i, a := range bucketedAlgorithms {
		for _, slack := range []bool{true, false} {
			lim := core.Limit{Max: 3, Window: 300 * time.Millisecond, Algorithm: a}
			t.Run(fmt.Sprintf("%s/slack=%v", lim, slack), func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				prefix := fmt.Sprintf("late%d%v", i, slack)
				opts := []Option{WithBuckets(4), WithPrefix(prefix)}
				if !slack {
					opts = append(opts, WithExpirySlack(0))
				}
				l, err := New(c, lim, opts...)
				require.NoError(t, err)
				t0 := onTimeStamp(lim)
				d, err := l.AllowN(ctx, "late", at(t0), lim.Max)
				require.NoError(t, err)
				require.True(t, d.Allowed, "%d units at t0", lim.Max)
				t1 := core.Millis(time.Now()) // Redis ran the call, and set its expiries, by t1
				d, err = l.AllowN(ctx, "late", at(t0+1), 1)
				require.NoError(t, err)
				require.False(t, d.Allowed, "one more at t0+1ms, on time")
				// Redis expires keys by its own clock, which cannot be
				// injected; instead of waiting on the wall clock, do what
				// Redis would have done by the late call's run instant, 50 ms
				// after the state's end: delete every key whose absolute
				// expiry (PEXPIRETIME) falls by then. Without slack the
				// state's end is at most t1 + its TTL; with the slack (the
				// client's 3 s timeout) it is that much later.
				expireBy(t, c, "*"+prefix+"*", t1+expectedTTL(lim, t0, lim.Max).Milliseconds()+50)
				d, err = l.AllowN(ctx, "late", at(t0+1), 1)
				require.NoError(t, err)
				assert.Equal(t, !slack, d.Allowed, "stamped t0+1ms, run 50 ms after its state's end: admitted only without slack")
			})
		}
	}
}

// TestBucketedLateWindowGetsTTL: a window hash first written by a late
// request (its window older than the bucket's newest) gets its own TTL,
// and the marker keeps the longer one: no bucket key is left without
// expiry, and the marker outlives every window hash.
func TestBucketedLateWindowGetsTTL(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		require.NoError(t, c.FlushDB(ctx).Err())
		lim := core.Limit{Max: 5, Window: 10 * time.Second, Algorithm: a}
		l, err := New(c, lim, WithBuckets(1), WithExpirySlack(time.Minute))
		require.NoError(t, err)
		now := core.Millis(time.Now())
		w := lim.WindowMillis()
		_, err = l.AllowN(ctx, "new", at(now), 1)
		require.NoError(t, err)
		_, err = l.AllowN(ctx, "late", at(now-w), 1) // the previous window, created after the newest
		require.NoError(t, err)
		mkey := BucketMarkerKey(DefaultPrefix, 0, Suffix(lim))
		assert.Equal(t, itoa64(now/w), c.Get(ctx, mkey).Val(), "%s: the marker keeps the newest window", a)
		mexp := c.PExpireTime(ctx, mkey).Val() // absolute expiries: read apart, compared exactly
		for _, j := range []int64{now/w - 1, now / w} {
			k := BucketWindowKey(DefaultPrefix, 0, Suffix(lim), j)
			exp := c.PExpireTime(ctx, k).Val()
			assert.Positive(t, exp, "%s: window %d's hash has an expiry", a, j)
			assert.GreaterOrEqual(t, mexp, exp, "%s: the marker outlives window %d's hash", a, j)
		}
	}
}

// TestBucketedNewestWindowFlag: every window hash carries field "" = "0"
// while it is its bucket's newest window and "1" once a newer one is
// written or when it is created behind the newest; a decision reads that
// flag with its count and consults the marker only when the flag is not
// "0", so a wrong flag would hide a newer window from the clock-back
// search (which TestBucketedAgreesWithCoreAndKeys would catch as a
// disagreement).
func TestBucketedNewestWindowFlag(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		require.NoError(t, c.FlushDB(ctx).Err())
		lim := core.Limit{Max: 5, Window: 10 * time.Second, Algorithm: a}
		l, err := New(c, lim, WithBuckets(1), WithExpirySlack(time.Minute))
		require.NoError(t, err)
		w := lim.WindowMillis()
		now := core.Millis(time.Now())
		flag := func(j int64) string {
			return c.HGet(ctx, BucketWindowKey(DefaultPrefix, 0, Suffix(lim), j), "").Val()
		}
		i := now / w
		_, err = l.AllowN(ctx, "x", at(now), 1)
		require.NoError(t, err)
		assert.Equal(t, "0", flag(i), "%s: the first window is the newest", a)
		_, err = l.AllowN(ctx, "z", at(now-w), 1) // z has nothing newer: counted in window i-1
		require.NoError(t, err)
		assert.Equal(t, "1", flag(i-1), "%s: a window created behind the newest", a)
		_, err = l.AllowN(ctx, "y", at(now+w), 1)
		require.NoError(t, err)
		assert.Equal(t, "0", flag(i+1), "%s: the new newest window", a)
		assert.Equal(t, "1", flag(i), "%s: the previous newest, once a newer one is written", a)
		assert.Equal(t, itoa64(i+1), c.Get(ctx, BucketMarkerKey(DefaultPrefix, 0, Suffix(lim))).Val(), "%s: the marker", a)
	}
}

// expireBy deletes every key of c matching pattern whose absolute expiry
// (PEXPIRETIME, ms) is at or before ms: what Redis' own expiry will have
// done by that instant. Keys without an expiry stay.
func expireBy(t *testing.T, c *goredis.Client, pattern string, ms int64) {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, pattern).Result()
	require.NoError(t, err)
	for _, k := range keys {
		at, err := c.PExpireTime(ctx, k).Result()
		require.NoError(t, err)
		if at >= 0 && at.Milliseconds() <= ms {
			require.NoError(t, c.Del(ctx, k).Err())
		}
	}
}
