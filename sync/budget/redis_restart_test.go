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

// TestLimiterAfterRedisRestartsEmpty: two PoPs' Limiters fill an
// identity's limit; Redis is killed (each PoP decides on its view, its
// calls failing) and started again empty, its scripts unloaded. The first
// Sync after the restart succeeds at both PoPs; in the loss's window they
// admit nothing more of the identity (each PoP's deny-until from Redis'
// last word before the loss still denies it; the stated bound allows up
// to the limit more: docs/budget.md, "Outside the invariant"); in no
// later window do they pass the limit, and from the fourth window after
// the loss on a window's requests (the one before it empty) are admitted
// up to the limit exactly, as before it, with no error. Two windows after
// the loss they are admitted 7 of 10: the free slots both PoPs had given
// up for the identity, which Redis forgot, are reserved again until the
// windows they were given up for pass (with FreeCredit -1, 10 of 10).
//
// It catches a driver that needs a lost key or a loaded script to go on:
// a Sync pipeline without EVAL on NOSCRIPT (ExecJobs) fails (checked by
// hand: on NOSCRIPT, here from the first Sync, as on any fresh Redis),
// and a guard or lease that refused the restarted Redis' calls would end
// its served windows short of the limit.
//
// go-redis stops dialling for a second of wall time once a pool has
// counted PoolSize failed dials (its dial-error breaker): the outage here
// costs one failed dial per call that reaches for the server (one probe
// request), so the client's PoolSize of 64 keeps the breaker far away.
func TestLimiterAfterRedisRestartsEmpty(t *testing.T) {
	_, p := redistest.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, PoolSize: 64})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	const max = 10
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	var lims []*Limiter
	for _, pop := range []string{"a", "b"} {
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(max, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close(ctx) })
		lims = append(lims, l)
	}
	syncAll := func(what string) {
		for _, l := range lims {
			require.NoError(t, l.Sync(ctx), "%s: a Sync succeeds", what)
		}
	}
	// window runs 2·max requests over the PoPs in turn, a Sync between
	// rounds (Redis is up whenever it runs), and returns how many were
	// admitted and the last error of a request or a Sync.
	window := func() (admitted int, err error) {
		for i := range 2 * max {
			d, e := lims[i%2].Allow(ctx, "k")
			if d.Allowed {
				admitted++
			}
			if e != nil {
				err = e
			}
			if i%4 == 3 {
				for _, l := range lims {
					if e := l.Sync(ctx); e != nil {
						err = e
					}
				}
			}
		}
		return admitted, err
	}
	syncAll("before")
	got, err := window()
	require.NoError(t, err, "a healthy Redis")
	require.Equal(t, max, got, "the two PoPs admit the limit in a window")

	require.NoError(t, p.Kill())
	for range 3 { // the first unit is free credit; the next asks Redis
		if _, err = lims[0].Allow(ctx, "probe"); err != nil {
			break
		}
	}
	require.ErrorIs(t, err, core.ErrUnavailable, "Redis down: decided on the view")
	require.NoError(t, p.Restart())
	syncAll("the first Sync after the restart")
	inLoss, err := window()
	require.NoError(t, err, "the restarted Redis serves every call")
	assert.Zero(t, inLoss, "in the loss's window: the PoPs still deny the identity Redis forgot was full")

	// two windows a step, so the previous window, empty, weighs nothing
	for x := 2; x <= 8; x += 2 {
		clock.Advance(2 * testWindow * time.Millisecond)
		syncAll("windows later")
		got, err := window()
		require.NoError(t, err, "window %d after the loss", x)
		t.Logf("window %d after the loss: %d admitted", x, got)
		assert.LessOrEqual(t, got, max, "window %d after the loss: within the limit", x)
		if x >= 4 {
			assert.Equal(t, max, got, "window %d after the loss: the limit exactly, as before it", x)
		}
	}
}
