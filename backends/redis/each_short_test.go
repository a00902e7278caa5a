package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
)

// TestAllowEachShortOutRefusedBeforeSending: an out slice shorter than asks
// is bad input found only after the pipeline ran: AllowEach counts every
// ask at Redis and then panics (index out of range) instead of returning an
// error matching core.ErrInvalid with nothing sent, as a bad key or weight
// does.
func TestAllowEachShortOutRefusedBeforeSending(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	l := newLimiter(t, c, core.PerWindow(10, time.Minute), WithPrefix("short"))
	asks := []Ask{{Key: "a", Now: at(1_764_979_200_000), N: 3}, {Key: "b", Now: at(1_764_979_200_000), N: 3}}
	var err error
	assert.NotPanics(t, func() { err = l.AllowEach(ctx, asks, make([]core.Decision, 1)) }, "AllowEach with len(out) < len(asks)")
	assert.ErrorIs(t, err, core.ErrInvalid, "AllowEach with len(out) < len(asks)")
	assert.Equal(t, int64(0), dbsize(t, c), "AllowEach refused for a short out wrote %d keys", dbsize(t, c))
}
