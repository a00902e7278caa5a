package hybrid

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doneCtx is a context already done, as a caller stalled past its
// deadline hands in.
func doneCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestDoneCtxLocalDecisionsDecide: with ctx already done, decisions from
// the view still decide, with no error: admissions below the margin and
// denials over the limit.
func TestDoneCtxLocalDecisionsDecide(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil) // margin 0: every decision from the view
	for i := range 100 {
		d, err := n.AllowN(doneCtx(), "k", t0, 1)
		require.NoError(t, err, "admission %d from the view with ctx done", i)
		require.True(t, d.Allowed, "admission %d of 100", i)
		require.Equal(t, core.SourceLocal, d.Source, "admission %d", i)
	}
	d, err := n.AllowN(doneCtx(), "k", t0, 1)
	assert.NoError(t, err, "denial from the view with ctx done")
	assert.False(t, d.Allowed, "the 101st unit of 100")
	assert.Equal(t, core.SourceCachedDeny, d.Source, "the 101st unit")
	d, err = n.Allow(doneCtx(), "other")
	assert.NoError(t, err, "Allow with ctx done")
	assert.True(t, d.Allowed, "Allow of a fresh identity with ctx done")
}

// TestDoneCtxWithinMarginNoCall: a request within the margin whose ctx is
// done before the call is decided from the view with a
// *core.UnavailableError, without calling Redis or marking it down: the
// next request with time left is decided at Redis.
func TestDoneCtxWithinMarginNoCall(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Margin = 0.5 })
	for range 50 {
		mustAllow(t, n, "k", t0)
	}
	rt := n.Stats().RedisRoundTrips
	d, err := n.AllowN(doneCtx(), "k", t0, 1)
	var ue *core.UnavailableError
	assert.ErrorAs(t, err, &ue, "within the margin with ctx done")
	assert.ErrorIs(t, err, context.Canceled, "the cause is the caller's ctx")
	assert.True(t, d.Allowed, "the view has room: admitted")
	s := n.Stats()
	assert.Equal(t, rt, s.RedisRoundTrips, "no call made with ctx done")
	assert.Zero(t, s.RedisDown, "Redis not marked down for the caller's lack of time")
	assert.Equal(t, uint64(1), s.FallbackLocal, "counted as a fallback admission")
	d = mustAllow(t, n, "k", t0)
	assert.Equal(t, core.SourceRedis, d.Source, "the next request with time left goes to Redis")
}

// TestDeadlineBound: a Node is DeadlineBound exactly when its go-redis
// client has ContextTimeoutEnabled.
func TestDeadlineBound(t *testing.T) {
	e := newEnv(t, false)
	assert.False(t, e.node("a", nil).DeadlineBound(), "env client without ContextTimeoutEnabled")
	bound := goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { bound.Close() })
	assert.True(t, e.node("b", func(c *Config) { c.Redis = bound }).DeadlineBound(), "client with ContextTimeoutEnabled")
}
