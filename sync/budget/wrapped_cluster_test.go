package budget

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tracedCluster is a user's type around a cluster client (an
// instrumentation layer, a circuit breaker): it follows redirections as
// the client it embeds, but is not a *redis.ClusterClient.
type tracedCluster struct{ *redis.ClusterClient }

// TestWrappedClusterClientGroups: on a real three-master cluster, New
// gives a type embedding *redis.ClusterClient, with Groups 0, the 16
// groups of a cluster client, and the keys of a Limiter on it, 64
// identities decided and synced, lie on every master. Caught mutation:
// telling a cluster client by its concrete type (the wrapper gets 1
// group: every key of the limit, the whole load, on one master).
func TestWrappedClusterClientGroups(t *testing.T) {
	cc, _ := redistest.Cluster(t)
	ctx := context.Background()
	cfg := Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(5, time.Minute), PoPs: 2}
	l, err := New(cfg, tracedCluster{cc}, core.NewManualClock(time.UnixMilli(w0+5)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(context.Background()) })
	require.Equal(t, 16, l.m.Config().Groups, "groups of a wrapped cluster client")
	for i := 0; i < 64; i++ {
		_, err := l.Allow(ctx, fmt.Sprint("user:", i))
		require.NoError(t, err, "identity %d", i)
	}
	require.NoError(t, l.Sync(ctx))
	var mu sync.Mutex
	var sizes []int64
	err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
		return err
	})
	require.NoError(t, err, "DBSIZE of every master")
	require.Len(t, sizes, 3, "masters")
	for i, n := range sizes {
		assert.Positive(t, n, "keys on master %d of %v", i, sizes)
	}
}

// TestWrappedClusterClientMovedIsOutage: a MOVED that a type embedding a
// *redis.ClusterClient returns (the wrapped client allowed no redirection
// and its slot map names one master for every slot: a slot that keeps
// moving) is an outage, as it is from the cluster client itself: a
// *core.UnavailableError, not a *RedirectError. Caught mutation: telling
// a cluster client by its concrete type (the wrapper's MOVED refused as a
// configuration error, with no decision).
func TestWrappedClusterClientMovedIsOutage(t *testing.T) {
	_, cl := redistest.Cluster(t)
	ctx := context.Background()
	cfg := Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(5, time.Minute), PoPs: 2, Groups: 16}
	probe, err := NewMachine(cfg)
	require.NoError(t, err)
	one := cl.Node(0).Addr
	var away string
	for i := 0; away == ""; i++ {
		id := fmt.Sprint("user:", i)
		m, err := cl.MasterOf(probe.tag(probe.group(probe.bucket(id))))
		require.NoError(t, err)
		if cl.Node(m).Addr != one {
			away = id
		}
	}
	wrong := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs:        []string{one},
		MaxRedirects: -1,
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: one}}}}, nil
		},
	})
	t.Cleanup(func() { wrong.Close() })
	for name, rdb := range map[string]redis.UniversalClient{"cluster client": wrong, "wrapped cluster client": tracedCluster{wrong}} {
		l, err := New(cfg, rdb, core.NewManualClock(time.UnixMilli(w0+5)))
		require.NoError(t, err, name)
		t.Cleanup(func() { l.Close(context.Background()) }) // its last Sync is refused as the Allow is
		_, err = l.Allow(ctx, away)
		require.Error(t, err, "%s: a MOVED", name)
		assert.ErrorIs(t, err, core.ErrUnavailable, "%s: an outage", name)
		assert.NotErrorIs(t, err, core.ErrInvalid, "%s: no configuration error", name)
	}
}
