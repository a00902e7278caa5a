package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoolSweepWithoutRequests: Sweep alone, no Acquire, releases a
// limiter outside the configuration unused for Idle, not a kept one nor
// one a request holds; a second Sweep less than Idle/4 after a look does
// nothing, and Sweep after Close neither. It catches a Sweep that does
// not look (idle limiters then live until a request comes), one that
// releases kept or held limiters, and one that ignores the Idle/4
// spacing.
func TestPoolSweepWithoutRequests(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocalPool(clk, 0, PoolOptions{Idle: time.Minute})
	sec := core.PerWindow(5, time.Second)
	b.Keep([]core.Limit{perMinute(1)})
	acquire(t, b, perMinute(1))
	acquire(t, b, sec)
	_, done, err := b.Acquire(core.PerWindow(6, time.Second))
	require.NoError(t, err)
	b.Sweep() // the first look: none idle
	clk.Advance(time.Minute)
	b.Sweep()
	assert.Equal(t, PoolStats{Live: 2, Kept: 1, Released: 1}, b.Pool(), "the idle one released; the kept and the held stay")

	done()
	clk.Advance(time.Minute/4 - time.Nanosecond)
	b.Sweep()
	assert.Equal(t, PoolStats{Live: 2, Kept: 1, Released: 1}, b.Pool(), "no look within Idle/4 of the last")
	clk.Advance(time.Nanosecond)
	b.Sweep()
	assert.Equal(t, PoolStats{Live: 1, Kept: 1, Released: 2}, b.Pool(), "let go and idle: released at the next look")

	require.NoError(t, b.Close(context.Background()))
	clk.Advance(time.Hour)
	b.Sweep()
	assert.Equal(t, PoolStats{Released: 2}, b.Pool(), "nothing after Close")
}
