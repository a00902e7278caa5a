package budget

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clusterScriptCalls is how many script calls (EVALSHA and EVAL) the nodes
// of cl ran, by their own count (INFO commandstats).
func clusterScriptCalls(t *testing.T, cl *redisproc.Cluster) int64 {
	t.Helper()
	var n int64
	for i := range cl.Addrs() {
		rdb := cl.Node(i).Client()
		calls, _ := redistest.CommandStats(t, rdb, "evalsha", "eval")
		require.NoError(t, rdb.Close())
		n += calls
	}
	return n
}

// TestPeekPastDeadlineSendsNothing: on a real three-master Redis Cluster,
// a Peek whose context's deadline had passed before the call went out
// sends nothing (no node runs a script), asks the cluster client for no
// slot-map reload (Redis said nothing of the topology), does not put the
// Limiter down, and answers from the view as a failed call does (the fail
// mode's Source, the view's Remaining) with a *core.UnavailableError
// wrapping context.DeadlineExceeded. A Peek on a live context then
// answers from Redis, still without a reload. AllowN, Sync and Reset
// past their deadline (each checks it before its call) send nothing and
// ask no reload either. Caught mutations: Peek
// checking only for a cancelled context (the call reaches go-redis,
// which fails it with the deadline before writing it, and the failure
// asks for a reload), or
// answering a passed deadline with the zero Decision (denied: a
// middleware peeking first would deny the request in fail-open mode),
// AllowN, Sync or Reset taking a deadline passed before their call for
// a failed call.
func TestPeekPastDeadlineSendsNothing(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	var reloads atomic.Int32
	l, err := New(Config{PoP: "a", Incarnation: 1, Limit: core.PerWindow(5, time.Minute), PoPs: 2, FreeCredit: -1},
		reloadCounting{cc, &reloads}, clock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	d, err := l.Allow(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, core.SourceRedis, d.Source, "no free credit: decided at Redis")
	ran := clusterScriptCalls(t, cl)

	late, cancel := context.WithDeadline(ctx, time.UnixMilli(1))
	defer cancel()
	d, err = l.Peek(late, "user:1", clock.Now())
	var ue *core.UnavailableError
	require.ErrorAs(t, err, &ue, "a deadline that passed: the store was not reached")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, int32(0), reloads.Load(), "no slot-map reload: Redis said nothing of the topology")
	assert.Equal(t, ran, clusterScriptCalls(t, cl), "nothing sent")
	assert.False(t, l.m.Down(), "the Limiter is not down")
	assert.True(t, d.Allowed, "fail open, and the view has room")
	assert.Equal(t, core.SourceLocal, d.Source, "decided on the view")
	assert.Equal(t, int64(4), d.Remaining, "the view's: Redis counted one unit")

	_, err = l.AllowN(late, "user:1", clock.Now(), 1)
	assert.ErrorAs(t, err, &ue, "AllowN past its deadline")
	assert.ErrorAs(t, l.Sync(late), &ue, "Sync past its deadline")
	assert.ErrorAs(t, l.Reset(late, "user:1"), &ue, "Reset past its deadline")
	assert.Equal(t, int32(0), reloads.Load(), "AllowN, Sync and Reset past their deadline ask no reload either")
	assert.Equal(t, ran, clusterScriptCalls(t, cl), "and send nothing")
	assert.False(t, l.m.Down(), "the Limiter is not down")

	d, err = l.Peek(ctx, "user:1", clock.Now())
	require.NoError(t, err)
	assert.Equal(t, core.SourceRedis, d.Source)
	assert.Equal(t, ran+1, clusterScriptCalls(t, cl), "a live Peek is one script call")
	assert.Equal(t, int32(0), reloads.Load(), "no reload")
}
