package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestClusterFailoverReachesPromotedReplica: on three masters with one
// replica each, the master of an identity is killed; while it is down the
// limiter answers core.ErrUnavailable with its fail mode, and once the
// replica is promoted it decides at the new master within seconds. Without
// the slot-map reload on error, go-redis would keep the dead address until
// its next periodic reload (60 s) and this test would time out.
func TestClusterFailoverReachesPromotedReplica(t *testing.T) {
	c, cl := redistest.ReplicatedCluster(t)
	l := newLimiter(t, c, core.PerWindow(1000, time.Minute), WithTimeout(300*time.Millisecond))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		_, err := l.Allow(ctx, "user:1")
		require.NoError(t, err)
	}
	victim, err := cl.MasterOf(l.Key("user:1"))
	require.NoError(t, err)
	err = cl.Kill(victim)
	require.NoError(t, err)
	d, err := l.Allow(ctx, "user:1")
	require.ErrorIs(t, err, core.ErrUnavailable, "master down: %+v, %v; want a fail-closed denial with core.ErrUnavailable", d, err)
	require.False(t, d.Allowed, "master down: %+v, %v; want a fail-closed denial with core.ErrUnavailable", d, err)
	require.Equal(t, core.SourceFailClosed, d.Source, "master down: %+v, %v; want a fail-closed denial with core.ErrUnavailable", d, err)
	err = cl.WaitHealthy()
	require.NoError(t, err)
	promoted := time.Now()
	for failed := 0; ; failed++ {
		d, err = l.Allow(ctx, "user:1")
		if err == nil {
			t.Logf("decided at the promoted replica %s after promotion (%d calls failed meanwhile): %+v",
				time.Since(promoted).Round(time.Millisecond), failed, d)
			break
		}
		require.ErrorIs(t, err, core.ErrUnavailable, "after failover: %v, want core.ErrUnavailable while not yet rerouted", err)
		// The cluster client learns the new master when it reloads its
		// slots; no event marks that, so this polls every 20 ms, bounded by
		// what only a hang reaches.
		require.LessOrEqual(t, time.Since(promoted), 30*time.Second, "still failing 30s after the replica was promoted: %v", err)
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, d.Allowed, "after failover: %+v, want allowed by Redis", d)
	require.Equal(t, core.SourceRedis, d.Source, "after failover: %+v, want allowed by Redis", d)
}
