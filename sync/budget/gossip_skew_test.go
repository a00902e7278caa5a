package budget

import (
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipDenialRunsOnRedisClock: PoP a's reply shows k over its limit
// at Redis 100 ms into window x (C 1 of x, 10 of x−1, limit 10): Redis
// admits k again from x·w + 1001 ms. PoP b, whose clock runs 1.5 s behind
// Redis' (skew the deny cache tolerates, TestDenyCacheRunsOnThePoPsClock),
// has had a Sync's reply (Redis ran it 2 ms after b sent it) and hears a's
// message at once. At Redis' x·w + 1200 ms pure Redis admits a unit of k,
// so b must not deny it from its deny cache then; at x·w + 500 it still
// denies. It catches Hear weighing heard counts at the PoP's time (b
// denied until Redis' x·w + 2500) and an estimate taken below the least
// sample (b denied past Redis' word).
func TestGossipDenialRunsOnRedisClock(t *testing.T) {
	const skew = 1500 // Redis' clock minus b's
	a := newTestMachine(t, nil)
	b := newTestMachine(t, func(c *Config) { c.PoP, c.Incarnation, c.FreeCredit = "q", 2, -1 })
	x := int64(w0/testWindow + 1)
	redisNow := x*testWindow + 100
	a.absorb(a.entry("k"), redisNow, &Result{Now: redisNow, Window: x}, ItemResult{CW: 1, CPrev: 10})
	require.False(t, core.SlidingAdmits(core.SlidingEstimate(1, 10, 100, testWindow), 10, 1), "Redis denies k at x·w+100")
	require.True(t, core.SlidingAdmits(core.SlidingEstimate(1, 10, 1200, testWindow), 10, 1), "Redis admits k at x·w+1200")
	msg, ok := a.Gossip(redisNow)
	require.True(t, ok)
	b.redis.note(redisNow-skew-50, redisNow-48, 64*100) // a Sync sent 50 ms before, run at Redis 2 ms after
	require.Equal(t, int64(skew+2), b.redis.ahead())
	b.entry("k")
	b.Hear(redisNow-skew, msg)
	d, c := b.Request(x*testWindow+500-skew, "k", 1)
	assert.True(t, c == nil && d.Source == SrcDenyCache && !d.Allowed, "b admits k from the cache at Redis' x·w+500, where pure Redis denies it: %+v", d)
	d, c = b.Request(x*testWindow+1200-skew, "k", 1)
	assert.False(t, c == nil && d.Source == SrcDenyCache, "b denies k from the cache at Redis' x·w+1200, where pure Redis admits it: %+v", d)
}

// TestRedisClockEstimate: the estimate is the least sample of the current
// epoch and the one before, never below 0, and none without a sample; an
// epoch two past the last sample's starts afresh, so a clock put right is
// followed. It catches the least taken over all time (a PoP whose clock
// was put right kept the old lag) and a negative lag read as Redis behind.
func TestRedisClockEstimate(t *testing.T) {
	var rc redisClock
	require.Equal(t, int64(0), rc.ahead(), "no sample")
	rc.note(1000, 1300, 100) // epoch 10: 300
	rc.note(1050, 1250, 100) // epoch 10: 200
	require.Equal(t, int64(200), rc.ahead())
	rc.note(1150, 1400, 100) // epoch 11: 250, the one before still kept
	require.Equal(t, int64(200), rc.ahead())
	rc.note(1250, 1300, 100) // epoch 12: 50; epoch 10 dropped
	require.Equal(t, int64(50), rc.ahead())
	rc.note(1950, 2650, 100) // epoch 19: afresh
	require.Equal(t, int64(700), rc.ahead())
	rc.note(900, 901, 100) // older than the epochs kept: ignored
	require.Equal(t, int64(700), rc.ahead())
	rc.note(1960, 1900, 100) // Redis behind: 0
	require.Equal(t, int64(0), rc.ahead())
}
