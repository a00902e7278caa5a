package server_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisCluster: the redis backend over a three-master Cluster (the
// client NewRedisClient builds for several addresses) limits every value,
// and the counters spread over the masters.
func TestRedisCluster(t *testing.T) {
	_, cl := redistest.Cluster(t)
	c, err := service.NewRedisClient(service.RedisClientOptions{Addrs: cl.Addrs(), Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	r := start(t, rules, redisOpts(c, core.NewManualClock(t0), false))
	for i := range 30 {
		ip := "10.0.1." + strconv.Itoa(i)
		require.Equal(t, 3, r.admitted(t, 4, "edge", desc("remote_address", ip)), "per-ip allows 3 a minute to %s on the Cluster", ip)
	}
	used := 0
	for i := range cl.Addrs() {
		nc := cl.Node(i).Client()
		size, err := nc.DBSize(context.Background()).Result()
		nc.Close()
		require.NoError(t, err)
		if size > 0 {
			used++
		}
	}
	assert.Equal(t, 3, used, "30 values' counters land on every master")
}
