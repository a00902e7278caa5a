package budget

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGossipBeforeResetIgnoredOnRedisClock: PoP b, whose clock runs 1.5 s
// behind Redis' (a limit of 10 per second), Resets k at 600 ms into its
// window x: Redis runs it in its window x+2. a's message from before the
// Reset (C 10 in Redis' x+2 and x+1), heard by b just after, must not
// deny k: Redis counts k from 0 and pure Redis admits it. It catches
// ResetDone recording the Reset's window on the PoP's clock while hear
// reads heard counts in Redis' windows (the count of x+2 denied k).
func TestGossipBeforeResetIgnoredOnRedisClock(t *testing.T) {
	const skew = 1500 // Redis' clock minus b's
	sec := func(c *Config) { c.Limit = core.PerWindow(10, time.Second) }
	a := newTestMachine(t, sec)
	b := newTestMachine(t, func(c *Config) { sec(c); c.PoP, c.Incarnation, c.FreeCredit = "q", 2, -1 })
	const w = 1000
	x := int64(w0/w + 1)
	now := x*w + 600 // b's clock
	redisNow := now + skew
	require.Equal(t, x+2, redisNow/w)
	a.absorb(a.entry("k"), redisNow-5, &Result{Now: redisNow - 5, Window: x + 2}, ItemResult{CW: 10, CPrev: 10})
	msg, ok := a.Gossip(redisNow - 5)
	require.True(t, ok)
	b.redis.note(now-50, now-48+skew, 64*100) // a Sync sent 50 ms before, run at Redis 2 ms after
	b.entry("k")
	c := b.Reset(now, "k")
	require.NotNil(t, c)
	b.ResetDone(c, nil) // Redis ran it at its x·w + 2100 (window x+2)
	b.entry("k")
	b.Hear(now+10, msg)
	assert.Zero(t, b.Stats().GossipDenies, "a's count of Redis' window x+2 from before the Reset denied k")
	d, call := b.Request(now+20, "k", 1)
	assert.False(t, call == nil && d.Source == SrcDenyCache, "b denies k, counted from 0 after the Reset, from the cache: %+v", d)
}
