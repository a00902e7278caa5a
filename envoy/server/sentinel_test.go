package server_test

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sentinelMaster is the name TestRedisSentinel's Sentinel monitors its
// master under.
const sentinelMaster = "edgelimit"

// TestRedisSentinel: with MasterName the client asks the Sentinel for the
// master and the redis backend counts there.
func TestRedisSentinel(t *testing.T) {
	master := startRedis(t)
	sen, err := redisproc.StartSentinel(master.Addr, sentinelMaster)
	require.NoError(t, err, "this test needs redis-server --sentinel")
	t.Cleanup(func() { _ = sen.Stop() })
	c, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{sen.Addr}, MasterName: sentinelMaster, Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	r := start(t, rules, redisOpts(c, core.NewManualClock(t0), false))
	assert.Equal(t, 3, r.admitted(t, 5, "edge", desc("remote_address", "10.0.0.1")), "per-ip through the Sentinel's master")
	mc := master.Client()
	defer mc.Close()
	n, err := mc.DBSize(t.Context()).Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n, "the counter is on the master the Sentinel named")
}
