package redistest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Cluster starts a private three-master Redis Cluster (see
// redisproc.StartCluster) for the test, stopped in t.Cleanup, and returns a
// cluster client to it, closed in t.Cleanup, together with the cluster. It
// calls t.Fatal with a clear message when redis-server is missing or the
// cluster does not come up.
func Cluster(t testing.TB) (*redis.ClusterClient, *redisproc.Cluster) {
	t.Helper()
	return clusterOf(t, redisproc.ClusterConfig{Masters: 3})
}

// ReplicatedCluster is Cluster with one replica per master and a
// cluster-node-timeout of redisproc.FailoverNodeTimeout (see
// redisproc.StartClusterWithReplicas): six nodes, so a killed master's
// replica takes over.
func ReplicatedCluster(t testing.TB) (*redis.ClusterClient, *redisproc.Cluster) {
	t.Helper()
	return clusterOf(t, redisproc.ClusterConfig{Masters: 3, ReplicasPerMaster: 1,
		NodeTimeout: redisproc.FailoverNodeTimeout})
}

func clusterOf(t testing.TB, cfg redisproc.ClusterConfig) (*redis.ClusterClient, *redisproc.Cluster) {
	t.Helper()
	cl, err := redisproc.StartClusterWith(cfg)
	require.NoError(t, err, "this test needs a real Redis Cluster")
	t.Cleanup(func() { cl.Stop() })
	c := cl.Client()
	t.Cleanup(func() { c.Close() })
	err = c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		return m.Ping(ctx).Err()
	})
	require.NoError(t, err, "private redis cluster %v does not answer", cl.Addrs())
	return c, cl
}

// FlushCluster empties every master of c (FLUSHALL), failing the test on
// error.
func FlushCluster(t testing.TB, c *redis.ClusterClient) {
	t.Helper()
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		return m.FlushAll(ctx).Err()
	})
	require.NoError(t, err, "FLUSHALL on every master")
}

// ClusterDBSize is the sum of DBSIZE over every master of c, failing the
// test on error.
func ClusterDBSize(t testing.TB, c *redis.ClusterClient) int64 {
	t.Helper()
	var total atomic.Int64 // ForEachMaster runs fn concurrently
	err := c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		if err != nil {
			return err
		}
		total.Add(n)
		return nil
	})
	require.NoError(t, err, "DBSIZE on every master")
	return total.Load()
}
