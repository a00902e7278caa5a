package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimiterAfterRedisRestartsEmpty: two PoPs' Limiters fill an
// identity's limit; Redis is killed (each PoP decides on its view, its
// calls failing) and started again empty, its scripts unloaded. Within
// a few Syncs (bounded by count) both PoPs are served again; in the
// loss's window the two together admit at most twice the limit (what
// Redis forgot plus the limit again: docs/budget.md, "Outside the
// invariant"; here none: each PoP's deny-until from Redis' last word
// before the loss still denies the identity); from the fifth window after the loss on, a window's
// requests (the one before it empty) are admitted up to the limit
// exactly, as before it, with no error. It catches a driver that needs a lost key or a loaded script to
// go on: a Sync pipeline without EVAL on NOSCRIPT (ExecJobs) fails
// (checked by hand: on NOSCRIPT, here from the first Sync, as on any
// fresh Redis), and a guard or lease that refused the restarted Redis'
// calls would end its served windows short of the limit.
func TestLimiterAfterRedisRestartsEmpty(t *testing.T) {
	rdb, p := redistest.Client(t)
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
			var err error
			for range 5 { // a pooled connection the restart broke may fail once
				if err = l.Sync(ctx); err == nil {
					break
				}
			}
			require.NoError(t, err, "%s: a Sync succeeds within 5 tries", what)
		}
	}
	// window runs 2·max requests over the PoPs in turn, a Sync between
	// rounds, and returns how many were admitted and the last error.
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
					_ = l.Sync(ctx) // fails while Redis is down: decided on the view
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
	syncAll("after the restart")
	inLoss, err := window()
	require.NoError(t, err, "the restarted Redis serves every call")
	t.Logf("in the loss's window: %d admitted before the loss, %d after", got, inLoss)
	assert.LessOrEqual(t, got+inLoss, 2*max, "in the loss's window: at most what Redis forgot and the limit again")

	// two windows a step, so the previous window, empty, weighs nothing
	for x := 2; x <= 8; x += 2 {
		clock.Advance(2 * testWindow * time.Millisecond)
		syncAll("windows later")
		got, err := window()
		require.NoError(t, err, "window %d after the loss", x)
		if x >= 5 {
			assert.Equal(t, max, got, "window %d after the loss: the limit exactly, as before it", x)
		}
	}
}
