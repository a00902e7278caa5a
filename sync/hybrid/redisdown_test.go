package hybrid

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStatsRedisDown: the RedisDown gauge is 1 from a failed Sync until
// RedisRetry has passed on the Clock (each failure renewing it), and 0 as
// soon as a Sync succeeds.
func TestStatsRedisDown(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	ctx := context.Background()
	mustAllow(t, n, "k", t0)
	mustSync(t, n, t0)
	require.Zero(t, n.Stats().RedisDown, "RedisDown with Redis up")

	require.NoError(t, e.proc.Kill(), "kill redis-server")
	mustAllow(t, n, "k", t0)
	assert.ErrorIs(t, n.Sync(ctx, t0), core.ErrUnavailable, "Sync with Redis dead")
	assert.Equal(t, uint64(1), n.Stats().RedisDown, "RedisDown right after the failed Sync")
	e.clock.Set(t0.Add(n.cfg.RedisRetry))
	assert.Zero(t, n.Stats().RedisDown, "RedisDown once RedisRetry passed without a failure")
	assert.ErrorIs(t, n.Sync(ctx, e.clock.Now()), core.ErrUnavailable, "Sync with Redis still dead")
	assert.Equal(t, uint64(1), n.Stats().RedisDown, "RedisDown renewed by the next failure")

	require.NoError(t, e.proc.Restart(), "restart redis-server")
	require.NoError(t, n.Sync(ctx, e.clock.Now()), "Sync with Redis back")
	assert.Zero(t, n.Stats().RedisDown, "RedisDown once Redis answers")
}
