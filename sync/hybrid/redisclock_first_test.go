package hybrid

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkOffset asserts that off is Redis' clock minus the frozen clock
// reading at: Redis runs on this machine's clock, which read between
// before and after around the call (1 ms for truncation to milliseconds).
func checkOffset(t *testing.T, off time.Duration, at, before, after time.Time, what string) {
	t.Helper()
	lo, hi := before.Sub(at)-time.Millisecond, after.Sub(at)+time.Millisecond
	assert.True(t, off >= lo && off <= hi,
		"%s: offset %v, want Redis' clock (this machine's, between %v and %v after the skewed clock's %v)", what, off, lo, hi, at)
}

// TestRedisClockFirstSyncLearnsOffset: a Node whose Clock is skewed (a
// frozen clock at t0, weeks off this machine's) learns its offset from
// its first Sync even with nothing to send, so the first request after it
// is counted in the window of Redis' clock.
func TestRedisClockFirstSyncLearnsOffset(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.RedisClock = true })
	require.Zero(t, n.ClockOffset(), "no offset before the first Sync")
	before := time.Now()
	require.NoError(t, n.Sync(context.Background(), t0), "first Sync, nothing pending")
	after := time.Now()
	off := n.ClockOffset()
	checkOffset(t, off, t0, before, after, "after a Sync with nothing pending")
	require.Greater(t, off.Abs(), n.cfg.Limit.Window, "the skew to correct exceeds a window")

	idx, _ := n.position(core.Millis(t0) + off.Milliseconds())
	skewedIdx, _ := n.position(core.Millis(t0))
	require.NotEqual(t, skewedIdx, idx, "Redis' window differs from the skewed clock's")
	mustAllow(t, n, "k", t0)
	mustSync(t, n, t0)
	assert.Equal(t, int64(1), e.redisTotal(DefaultNamespace, "k", idx),
		"the first request is counted in the window of Redis' clock")
	assert.Zero(t, e.redisTotal(DefaultNamespace, "k", skewedIdx),
		"nothing counted in the window of the skewed clock")
}

// TestRedisClockFlushAndSyncClock: Flush with nothing pending learns the
// offset too, SyncClock learns it on demand, and without RedisClock
// SyncClock does nothing.
func TestRedisClockFlushAndSyncClock(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.RedisClock = true })
	before := time.Now()
	require.NoError(t, n.Flush(context.Background(), t0), "Flush, nothing pending")
	checkOffset(t, n.ClockOffset(), t0, before, time.Now(), "after a Flush with nothing pending")

	m := e.node("b", func(c *Config) { c.RedisClock = true })
	before = time.Now()
	require.NoError(t, m.SyncClock(context.Background()), "SyncClock")
	checkOffset(t, m.ClockOffset(), t0, before, time.Now(), "after SyncClock")

	off := e.node("c", nil)
	rt := off.Stats().RedisRoundTrips
	require.NoError(t, off.SyncClock(context.Background()), "SyncClock without RedisClock")
	assert.Zero(t, off.ClockOffset(), "no offset without RedisClock")
	assert.Equal(t, rt, off.Stats().RedisRoundTrips, "no Redis call without RedisClock")
}

// TestRedisClockSyncClockFailure: SyncClock on a Redis that refuses
// returns a *core.UnavailableError, and a Sync then fails the same way
// before sending anything, the offset still unknown (0).
func TestRedisClockSyncClockFailure(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.RedisClock = true })
	require.NoError(t, e.proc.Kill(), "kill redis-server")
	var ue *core.UnavailableError
	err := n.SyncClock(context.Background())
	assert.ErrorAs(t, err, &ue, "SyncClock on a dead Redis")
	assert.ErrorIs(t, n.Sync(context.Background(), t0), core.ErrUnavailable, "Sync on a dead Redis")
	assert.Zero(t, n.ClockOffset(), "no offset learned from a dead Redis")
}
