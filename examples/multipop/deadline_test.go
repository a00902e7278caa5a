package main

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPoPLimiterIsDeadlineBound: the limiter a PoP hands the middleware,
// built as runPoP builds it (newRedisClient, newLimiter), says it is
// DeadlineBound, so the middleware calls it on the request's goroutine and
// a decision the budget limiter makes from its view (a Redis call that
// ran past the deadline on a loaded machine included) is served, not
// abandoned at the 100 ms deadline as a 503. It catches a PoP wrapper that
// hides the budget limiter's DeadlineBound (an embedded core.Limiter
// did: calm clients far below the limit got 503 while the machine was
// starved of CPU), and a client without ContextTimeoutEnabled.
func TestPoPLimiterIsDeadlineBound(t *testing.T) {
	redis := redistest.Start(t)
	rdb := newRedisClient(redis.Addr)
	defer rdb.Close()
	ctx := context.Background()
	lim, err := newLimiter(ctx, popOptions{name: "pop1", redisAddr: redis.Addr, limit: 10, window: time.Second, pops: 3}, rdb)
	require.NoError(t, err)
	defer func() { assert.NoError(t, lim.close(ctx)) }()
	var handed any = lim // what runPoP passes to middleware.WithLimit
	b, ok := handed.(middleware.DeadlineBound)
	require.True(t, ok, "the PoP's limiter does not implement middleware.DeadlineBound")
	assert.True(t, b.DeadlineBound(), "the PoP's limiter is not DeadlineBound")
}
