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
