package budget

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// reloadCounting is a user's wrapper of a cluster client that counts the
// slot-map reloads asked of it before passing them on.
type reloadCounting struct {
	*redis.ClusterClient
	reloads *atomic.Int32
}

// ReloadState counts the reload and asks the wrapped client for it.
func (c reloadCounting) ReloadState(ctx context.Context) {
	c.reloads.Add(1)
	c.ClusterClient.ReloadState(ctx)
}

// TestFailedCallReloadsTheSlotMap: on a real three-master cluster, the
// master holding an identity's group is killed; a decision Call that finds
// it dead, and a Sync whose batch does, must each ask the client to
// reload its slot map, so a replica promoted in its place is found without
// waiting for go-redis' periodic reload (60 s by default: a dead master
// answers no MOVED). Caught mutations: the budget Limiter never asking for
// a reload (as before: only backends/redis did), or asking only after a
// decision Call (the Sync loop alone meets the dead master of a group
// whose identities all live on grants).
func TestFailedCallReloadsTheSlotMap(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	limiter := func(pop string, inc uint64, reloads *atomic.Int32) *Limiter {
		l, err := New(Config{PoP: pop, Incarnation: inc, Limit: core.PerWindow(5, time.Minute), PoPs: 2, FreeCredit: -1},
			reloadCounting{cc, reloads}, clock)
		require.NoError(t, err)
		t.Cleanup(func() { l.Close(context.Background()) })
		d, err := l.Allow(ctx, "user:1")
		require.NoError(t, err)
		require.True(t, d.Allowed)
		return l
	}
	var decided, synced atomic.Int32
	a, b := limiter("a", 1, &decided), limiter("b", 2, &synced)
	require.Zero(t, decided.Load()+synced.Load(), "no reload while every call succeeds")

	key := a.m.BucketKey(a.m.bucket("user:1"), core.Millis(clock.Now())/a.m.w)
	victim, err := cl.MasterOf(key)
	require.NoError(t, err)
	require.NoError(t, cl.Kill(victim))

	_, err = a.Allow(ctx, "user:1")
	require.ErrorIs(t, err, core.ErrUnavailable, "the group's master is dead")
	require.Equal(t, int32(1), decided.Load(), "the failed decision Call asked for a reload")

	require.ErrorIs(t, b.Sync(ctx), core.ErrUnavailable, "the Sync's batch of the dead master's group fails")
	require.Equal(t, int32(1), synced.Load(), "the failed Sync asked for a reload")
}
