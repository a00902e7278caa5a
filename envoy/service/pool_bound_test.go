package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// acquire takes b's limiter of l and lets go of it at once.
func acquire(t *testing.T, b Backend, l core.Limit) core.Limiter {
	t.Helper()
	lim, done, err := b.Acquire(l)
	require.NoError(t, err)
	done()
	return lim
}

// perMinute is the limit of max a minute.
func perMinute(max int64) core.Limit { return core.PerWindow(max, time.Minute) }

// TestPoolBoundReleasesLeastRecentlyUsed: with Max 3, a fourth limiter
// outside the configuration releases the least recently used one (the
// first built, the second having been used since), never a kept one, and
// a limit released is built afresh when asked again. It catches a pool
// without a bound, one that releases by age of build rather than of use,
// and one that counts kept limiters against the bound or releases them.
func TestPoolBoundReleasesLeastRecentlyUsed(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Hour, Max: 3})
	t.Cleanup(func() { b.Close(context.Background()) })
	b.Keep([]core.Limit{perMinute(1), perMinute(2)})
	acquire(t, b, perMinute(1))
	acquire(t, b, perMinute(2))
	first := acquire(t, b, perMinute(10))
	for _, m := range []int64{11, 12} {
		clk.Advance(time.Second)
		acquire(t, b, perMinute(m))
	}
	clk.Advance(time.Second)
	acquire(t, b, perMinute(11)) // 10 is now the least recently used
	assert.Equal(t, PoolStats{Live: 5, Kept: 2}, b.Pool(), "Max 3 besides the 2 kept")

	clk.Advance(time.Second)
	acquire(t, b, perMinute(13))
	assert.Equal(t, PoolStats{Live: 5, Kept: 2, Released: 1}, b.Pool(), "one released past Max")
	assert.NotSame(t, first, acquire(t, b, perMinute(10)), "10 was released: a fresh limiter")
	assert.Equal(t, PoolStats{Live: 5, Kept: 2, Released: 2}, b.Pool(), "and 12, then the least recently used, released for it")
}

// TestPoolBoundSparesLimitersInUse: past Max while every limiter outside
// the configuration is in use, the new one is built all the same (the
// pool is over its bound by the requests in flight) and the excess is
// released at the first build after a request lets go. It catches a
// release of a limiter a request still holds.
func TestPoolBoundSparesLimitersInUse(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Hour, Max: 1})
	t.Cleanup(func() { b.Close(context.Background()) })
	held, done1, err := b.Acquire(perMinute(10))
	require.NoError(t, err)
	_, done2, err := b.Acquire(perMinute(11))
	require.NoError(t, err)
	assert.Equal(t, PoolStats{Live: 2}, b.Pool(), "both in use: none released")
	d, err := held.AllowN(context.Background(), "k", clk.Now(), 1)
	require.NoError(t, err)
	assert.True(t, d.Allowed, "the held limiter still decides")
	done1()
	done2()
	clk.Advance(time.Second)
	acquire(t, b, perMinute(12))
	assert.Equal(t, PoolStats{Live: 1, Released: 2}, b.Pool(), "back to Max once let go")
}

// TestPoolIdleRelease: a limiter outside the configuration unused for
// Idle is released at a request's look, one used meanwhile is not, nor a
// kept one; a limit a new configuration dropped is released like an
// override's; a local limiter only once unused for twice its window as
// well. It catches a release by time since build rather than since use,
// a configuration swap that keeps the old limits, and a local limiter
// released while its counts still hold.
func TestPoolIdleRelease(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Minute})
	t.Cleanup(func() { b.Close(context.Background()) })
	short, long := core.PerWindow(5, time.Second), core.PerWindow(5, time.Hour)
	b.Keep([]core.Limit{perMinute(1)})
	acquire(t, b, perMinute(1))
	acquire(t, b, short)
	acquire(t, b, long)
	acquire(t, b, perMinute(20))
	clk.Advance(50 * time.Second)
	acquire(t, b, perMinute(20)) // used: stays; the first look finds none idle
	clk.Advance(14 * time.Second)
	acquire(t, b, perMinute(1)) // no look: the last was less than Idle/4 ago
	assert.Equal(t, PoolStats{Live: 4, Kept: 1}, b.Pool(), "looks at most every Idle/4")
	clk.Advance(time.Second)
	acquire(t, b, perMinute(1)) // looks for idle limiters
	assert.Equal(t, PoolStats{Live: 3, Kept: 1, Released: 1}, b.Pool(), "short released; long's counts still hold; 20 used 15s ago")

	b.Keep([]core.Limit{perMinute(2)}) // a reload: 1 dropped
	clk.Advance(2 * time.Hour)
	acquire(t, b, perMinute(2))
	assert.Equal(t, PoolStats{Live: 1, Kept: 1, Released: 4}, b.Pool(), "1 (dropped), 20 and long released at 2's build; 2 kept")
}

// TestPoolOptionsInvalid: a negative Idle, Max or CloseTimeout fails
// Acquire with an error matching core.ErrInvalid and builds nothing.
func TestPoolOptionsInvalid(t *testing.T) {
	for _, po := range []PoolOptions{{Idle: -time.Second}, {Max: -1}, {CloseTimeout: -time.Second}} {
		b := NewLocalPool(nil, 0, po)
		_, _, err := b.Acquire(perMinute(1))
		assert.ErrorIs(t, err, core.ErrInvalid, "%+v", po)
		assert.Equal(t, PoolStats{}, b.Pool(), "%+v: nothing built", po)
	}
}

// TestPoolIdleSparesLimitersInUse: a limiter a request holds past Idle is
// not released by a look for idle limiters, and is at the first look after
// the request lets go. It catches a release that ignores the requests
// using a limiter.
func TestPoolIdleSparesLimitersInUse(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Minute})
	t.Cleanup(func() { b.Close(context.Background()) })
	held, done, err := b.Acquire(core.PerWindow(5, time.Second))
	require.NoError(t, err)
	clk.Advance(time.Hour)
	acquire(t, b, perMinute(1)) // looks for idle limiters
	assert.Equal(t, PoolStats{Live: 2}, b.Pool(), "held: not released")
	d, err := held.AllowN(context.Background(), "k", clk.Now(), 1)
	require.NoError(t, err)
	assert.True(t, d.Allowed)
	done()
	clk.Advance(time.Minute)
	acquire(t, b, perMinute(1))
	assert.Equal(t, PoolStats{Live: 1, Released: 1}, b.Pool(), "released once let go")
}

// TestPoolReleasedEntryRefused: a request that found a limiter in the
// lock-free map just before its release (here: the entry looked up, then
// the limit released past the bound) does not use it, but builds a fresh
// one. It catches an acquire that revives a released entry, whose
// limiter is then closed under the request.
func TestPoolReleasedEntryRefused(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Hour, Max: 1})
	t.Cleanup(func() { b.Close(context.Background()) })
	old := acquire(t, b, perMinute(10))
	v, ok := b.p.ready.Load(perMinute(10))
	require.True(t, ok)
	clk.Advance(time.Second)
	acquire(t, b, perMinute(11)) // releases 10
	e := v.(*entry)
	assert.False(t, e.acquire(clk.UnixMilli()*1e6), "a released entry takes no reference")
	assert.NotSame(t, old, acquire(t, b, perMinute(10)), "a fresh limiter")
}
