package redistest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestClusterFailover: three masters with one replica each; once the
// replicas have copied every write, the master of a key is killed, a
// replica is promoted (WaitHealthy), every key is still there, and the
// killed node, restarted, rejoins as a replica.
func TestClusterFailover(t *testing.T) {
	start := time.Now()
	c, cl := ReplicatedCluster(t)
	t.Logf("3 masters + 3 replicas up in %s", time.Since(start))
	got := roles(t, cl)
	require.Equal(t, 3, got, "%d replicas among %d nodes, want 3", got, len(cl.Addrs()))
	ctx := context.Background()
	for i := 0; i < 60; i++ {
		err := c.Set(ctx, fmt.Sprint("k", i), i, 0).Err()
		require.NoError(t, err)
	}
	waitReplicated(t, c)
	victim, err := cl.MasterOf("k0")
	require.NoError(t, err)
	err = cl.Kill(victim)
	require.NoError(t, err)
	start = time.Now()
	err = cl.WaitHealthy()
	require.NoError(t, err)
	t.Logf("master %d killed; replica promoted in %s", victim, time.Since(start))
	now, err := cl.MasterOf("k0")
	require.NoError(t, err, "k0 served by node %d (err %v) after failover, killed %d", now, err, victim)
	require.NotEqual(t, victim, now, "k0 served by node %d (err %v) after failover, killed %d", now, err, victim)
	for i := 0; i < 60; i++ {
		key := fmt.Sprint("k", i)
		waitOK(t, func() error {
			err := c.Get(ctx, key).Err()
			if err != nil {
				// go-redis reloads its slot map on MOVED or every
				// ClusterStateReloadInterval, not on a dead node.
				c.ReloadState(ctx)
			}
			return err
		})
	}
	start = time.Now()
	err = cl.Restart(victim)
	require.NoError(t, err)
	r, err := cl.Replica(victim)
	require.NoError(t, err, "restarted node %d: replica %v, err %v", victim, r, err)
	require.True(t, r, "restarted node %d: replica %v, err %v", victim, r, err)
	t.Logf("killed master back as a replica in %s", time.Since(start))
}

// roles counts the replicas of cl, failing on error.
func roles(t *testing.T, cl *redisproc.Cluster) int {
	t.Helper()
	n := 0
	for i := range cl.Addrs() {
		r, err := cl.Replica(i)
		require.NoError(t, err)
		if r {
			n++
		}
	}
	return n
}

// waitReplicated waits until every replica of every master of c has
// acknowledged its master's whole replication stream.
func waitReplicated(t *testing.T, c *redis.ClusterClient) {
	t.Helper()
	waitOK(t, func() error {
		return c.ForEachMaster(context.Background(), func(ctx context.Context, m *redis.Client) error {
			s, err := m.Info(ctx, "replication").Result()
			if err != nil {
				return err
			}
			return replicasCaughtUp(s)
		})
	})
}

// replicasCaughtUp checks an INFO replication text: at least one replica,
// each at master_repl_offset.
func replicasCaughtUp(info string) error {
	var offset string
	var replicas []string
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			offset = v
		}
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "offset=") {
			replicas = append(replicas, line)
		}
	}
	if len(replicas) == 0 {
		return fmt.Errorf("no replica: %q", info)
	}
	for _, r := range replicas {
		if !strings.Contains(r+",", ",offset="+offset+",") {
			return fmt.Errorf("replica behind master offset %s: %s", offset, r)
		}
	}
	return nil
}
