package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPeekNWhileDownDecidesAsAllowN: two PoPs serve one identity (limit
// 10), then Redis is killed; at a PoP that is down, PeekN of n units is
// allowed only when AllowN of n would be (its grant, then its outage
// share), for every n. Mutation it catches: a peek while down allowed
// whenever the view's Remaining covers n (PeekN of 4 allowed, AllowN of 4
// denied by the outage share).
func TestPeekNWhileDownDecidesAsAllowN(t *testing.T) {
	_, p := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	mk := func(pop string) *Limiter {
		rdb := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clock)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(ctx) })
		return l
	}
	a, b := mk("a"), mk("b")
	for i := 0; i < 3; i++ {
		d, err := a.AllowN(ctx, "k", clock.Now(), 1)
		require.NoError(t, err)
		require.True(t, d.Allowed)
		d, err = b.AllowN(ctx, "k", clock.Now(), 1)
		require.NoError(t, err)
		require.True(t, d.Allowed)
	}
	require.NoError(t, a.Sync(ctx))
	require.NoError(t, b.Sync(ctx))
	require.NoError(t, a.Sync(ctx))
	require.NoError(t, p.Kill())
	_, err := a.Peek(ctx, "k", clock.Now())
	require.ErrorIs(t, err, core.ErrUnavailable)
	require.True(t, a.m.Down())
	for n := int64(10); n >= 1; n-- {
		pk, _ := a.PeekN(ctx, "k", clock.Now(), n)
		if !pk.Allowed {
			continue
		}
		d, _ := a.AllowN(ctx, "k", clock.Now(), n)
		assert.True(t, d.Allowed, "PeekN of %d allowed (%+v), AllowN of %d denied (%+v)", n, pk, n, d)
		return
	}
}
