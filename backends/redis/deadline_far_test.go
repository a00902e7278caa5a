package redis

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPipelinedFarContextDeadline: a caller's context whose deadline lies
// far ahead (time.Now().Add(math.MaxInt64), a "no deadline" written as a
// deadline) makes callDeadline add time.Until(deadline) to the monotonic
// now without the saturation it applies to the timeout: the sum wraps
// negative, the call's timer fires at once and the call is failed unsent,
// so every pipelined decision of such a caller is a fail-mode one.
func TestPipelinedFarContextDeadline(t *testing.T) {
	c, _ := redistest.Client(t)
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPipelining(time.Millisecond, 8))
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(math.MaxInt64))
	defer cancel()
	d, err := l.AllowN(ctx, "far", at(1_764_979_200_000), 1)
	require.NoError(t, err, "decision %+v", d)
	assert.True(t, d.Allowed, "decision %+v", d)
}
