package redistest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestClusterKillRestart: the cluster comes up with every slot served by
// three masters; with one master killed the others keep serving their
// slots; restarted, it serves its slots again, empty.
func TestClusterKillRestart(t *testing.T) {
	start := time.Now()
	c, cl := Cluster(t)
	t.Logf("3-master cluster up in %s: %v", time.Since(start), cl.Addrs())
	ctx := context.Background()
	shards, err := c.ClusterShards(ctx).Result()
	require.NoError(t, err)
	require.Len(t, shards, 3, "%d shards, want 3", len(shards))
	for i := 0; i < 30; i++ {
		err := c.Set(ctx, fmt.Sprint("k", i), i, 0).Err()
		require.NoError(t, err)
	}
	n := ClusterDBSize(t, c)
	require.Equal(t, int64(30), n, "cluster DBSIZE %d, want 30", n)
	killed := cl.Node(1).Addr
	err = cl.Kill(1)
	require.NoError(t, err)
	served := 0
	for i := 0; i < 30; i++ {
		key := fmt.Sprint("k", i)
		owner := ownerOf(t, cl.Addrs(), key)
		err := c.Get(ctx, key).Err()
		if owner != killed {
			require.NoError(t, err, "GET %s on a live master %s", key, owner)
		} else {
			require.Error(t, err, "GET %s answered by the killed master", key)
		}
		if err == nil {
			served++
		}
	}
	require.NotEqual(t, 0, served, "%d of 30 keys served with one master of three down", served)
	require.NotEqual(t, 30, served, "%d of 30 keys served with one master of three down", served)
	start = time.Now()
	err = cl.Restart(1)
	require.NoError(t, err)
	t.Logf("master back and cluster ok in %s", time.Since(start))
	waitOK(t, func() error { return c.Set(ctx, "after", 1, 0).Err() })
	for i := 0; i < 30; i++ {
		key := fmt.Sprint("k", i)
		waitOK(t, func() error {
			err := c.Get(ctx, key).Err()
			if err == redis.Nil {
				return nil // on the restarted (empty) master
			}
			return err
		})
	}
	FlushCluster(t, c)
	n = ClusterDBSize(t, c)
	require.Equal(t, int64(0), n, "DBSIZE %d after FlushCluster", n)
}

// ownerOf asks the first live node which master serves key's slot.
func ownerOf(t *testing.T, addrs []string, key string) string {
	t.Helper()
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		slot, err1 := c.ClusterKeySlot(context.Background(), key).Result()
		shards, err2 := c.ClusterShards(context.Background()).Result()
		c.Close()
		if err1 != nil || err2 != nil {
			continue
		}
		for _, s := range shards {
			for _, r := range s.Slots {
				if r.Start <= slot && slot <= r.End {
					if m := shardMasterAddr(s); m != "" {
						return m
					}
				}
			}
		}
	}
	require.FailNow(t, fmt.Sprintf("no node knows the owner of %q", key))
	return ""
}

// shardMasterAddr is the host:port of the node CLUSTER SHARDS lists as the
// shard's master, or "" when it lists none.
func shardMasterAddr(s redis.ClusterShard) string {
	for _, n := range s.Nodes {
		if n.Role == "master" {
			return net.JoinHostPort(n.IP, strconv.FormatInt(n.Port, 10))
		}
	}
	return ""
}

// waitOK retries f for up to 10 s (a cluster client refreshes its slot map
// lazily after a node comes back).
func waitOK(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		// Polls (no event marks a reroute), bounded by a hang only.
		require.False(t, time.Now().After(deadline), "still failing after 30s: %v", err)
		time.Sleep(20 * time.Millisecond)
	}
}
