package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolCloseBoundedByItsContext: Close waits for the closes of limiters
// released before it (a budget limiter's last Sync) only while its
// context lives: a released limiter whose close hangs (Redis not
// answering) does not hold Close past its context, and the limiters
// still in the pool are closed all the same. It catches a Close that
// waits for released limiters without bound, past the server's
// -close-timeout.
func TestPoolCloseBoundedByItsContext(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	closed := make(chan core.Limit, 4)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Hour, Max: 1})
	b.p.close = func(ctx context.Context, l core.Limiter) error {
		if l.Limit() == perMinute(10) {
			<-hang // the released limiter's last Sync never ends
		}
		closed <- l.Limit()
		return nil
	}
	acquire(t, b, perMinute(10))
	clk.Advance(time.Second)
	acquire(t, b, perMinute(11)) // releases 10, whose close hangs
	require.Equal(t, PoolStats{Live: 1, Released: 1}, b.Pool())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, b.Close(ctx), "the pool's own limiter closed")
	assert.Equal(t, perMinute(11), <-closed, "the limiter still in the pool is closed")
}

// TestReleasedLimiterCloseTimeout: a released limiter is closed (a budget
// limiter's last Sync) under a context whose deadline is
// PoolOptions.CloseTimeout after its release, DefaultCloseTimeout when
// unset. The deadline is read from the context the close gets and placed
// between the times read before and after the release: nothing waits for
// it. It catches a constant timeout that ignores the configured one (the
// server's -close-timeout).
func TestReleasedLimiterCloseTimeout(t *testing.T) {
	for _, c := range []struct{ set, want time.Duration }{
		{0, DefaultCloseTimeout}, {2 * time.Second, 2 * time.Second}, {time.Minute, time.Minute},
	} {
		clk := core.NewManualClock(poolT0)
		b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Hour, Max: 1, CloseTimeout: c.set})
		deadlines := make(chan time.Time, 1) // the released limiter's close; zero: none
		b.p.close = func(ctx context.Context, l core.Limiter) error {
			if l.Limit() == perMinute(10) {
				d, _ := ctx.Deadline()
				deadlines <- d
			}
			return nil
		}
		acquire(t, b, perMinute(10))
		clk.Advance(time.Second)
		before := time.Now()
		acquire(t, b, perMinute(11)) // past Max: releases 10
		settle(&b.p)
		after := time.Now()
		require.Equal(t, PoolStats{Live: 1, Released: 1}, b.Pool())
		d := <-deadlines
		require.False(t, d.IsZero(), "the close of a released limiter has a deadline")
		assert.False(t, d.Before(before.Add(c.want)), "CloseTimeout %v: deadline %v after the release began, want at least %v", c.set, d.Sub(before), c.want)
		assert.False(t, d.After(after.Add(c.want)), "CloseTimeout %v: deadline %v after the release ended, want at most %v", c.set, d.Sub(after), c.want)
		require.NoError(t, b.Close(context.Background()))
	}
}

// TestReleasedLimitersCloseOnOwnContexts: two limiters released at one
// look for idle limiters are closed one after the other, each under a
// context of its own, the first's ended before the second's close
// begins, so a close that spends its whole CloseTimeout leaves the next
// one its full time. It catches one context (one timeout) shared by every
// limiter released together.
func TestReleasedLimitersCloseOnOwnContexts(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Minute})
	var ctxs []context.Context // the closes run one after another
	var firstAtSecond error    // the first close's context's Err as the second begins
	b.p.close = func(ctx context.Context, l core.Limiter) error {
		if len(ctxs) == 1 {
			firstAtSecond = ctxs[0].Err()
		}
		ctxs = append(ctxs, ctx)
		return nil
	}
	acquire(t, b, perMinute(10))
	acquire(t, b, perMinute(11))
	clk.Advance(2 * time.Minute)
	b.Sweep() // releases both
	settle(&b.p)
	require.Len(t, ctxs, 2, "both released limiters closed")
	assert.NotSame(t, ctxs[0], ctxs[1], "each close has its own context")
	assert.ErrorIs(t, firstAtSecond, context.Canceled, "the first close's context ended before the second close began")
	require.NoError(t, b.Close(context.Background()))
}
