package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startRedis starts a private redis-server for the test, stopped when it
// ends.
func startRedis(t *testing.T) *redisproc.Proc {
	t.Helper()
	return redistest.Start(t)
}

// redisClient is the client the server builds, for addr.
func redisClient(t *testing.T, addr string) goredis.UniversalClient {
	t.Helper()
	c, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{addr}, Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// startFailMode starts a private Redis and a server for rules on it whose
// Redis backend fails open or closed after a 200 ms timeout, its clock 10 s
// into t0's minute; stop the Redis to see the fail mode.
func startFailMode(t *testing.T, failOpen bool) (*running, *redisproc.Proc) {
	t.Helper()
	rs := startRedis(t)
	c, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{rs.Addr}, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	clk := core.NewManualClock(t0.Add(10 * time.Second))
	o := redisOpts(c, clk, failOpen)
	o.Service.Backend = service.NewRedis(c, service.RedisOptions{Clock: clk, FailOpen: failOpen, Timeout: 200 * time.Millisecond})
	return start(t, rules, o), rs
}

func redisOpts(c goredis.UniversalClient, clk core.Clock, failOpen bool) server.Options {
	return server.Options{Service: service.Options{
		Backend: service.NewRedis(c, service.RedisOptions{Clock: clk, FailOpen: failOpen, Timeout: 2 * time.Second}),
		Clock:   clk, Headers: true,
	}}
}

func TestRedisSharedAcrossInstances(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	a := start(t, rules, redisOpts(redisClient(t, rs.Addr), clk, false))
	b := start(t, rules, redisOpts(redisClient(t, rs.Addr), clk, false))
	got := 0
	for i := range 10 {
		r := a
		if i%2 == 1 {
			r = b
		}
		if r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1")).OverallCode == ok {
			got++
		}
	}
	assert.Equal(t, 3, got, "two instances on one Redis share per-ip's 3 a minute")
	assert.Equal(t, 2, a.admitted(t, 5, "edge", desc("to_cluster", "mongo", "from_cluster", "web")), "nested rule at Redis")
	assert.Equal(t, 1, b.admitted(t, 5, "edge", desc("to_cluster", "mongo", "from_cluster", "batch")), "exact nested value at Redis")
	resp := a.ask(t, "edge", 0, desc("remote_address", "10.0.0.2"), desc("premium_user", "bob"))
	assert.Nil(t, resp.Statuses[0].CurrentLimit, "replaces at Redis")
	w := desc("weighted", "r")
	resp = b.ask(t, "edge", 7, w)
	assert.Equal(t, uint32(3), resp.Statuses[0].LimitRemaining, "hits_addend 7 of 10 at Redis")
	keys, err := rs.Client().Keys(context.Background(), "el:*").Result()
	require.NoError(t, err)
	assert.NotEmpty(t, keys, "counts live in Redis under the el prefix")
}

func TestRedisArticleTableA(t *testing.T) {
	rs := startRedis(t)
	got := map[string]int{}
	for _, alg := range []string{"fixed", "sliding"} {
		clk := core.NewManualClock(t0)
		r := start(t, "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 100, algorithm: "+alg+"}\n",
			redisOpts(redisClient(t, rs.Addr), clk, false))
		got[alg] = tableA(t, r, clk)
	}
	assert.Equal(t, 200, got["fixed"], "fixed window across the boundary, at Redis")
	assert.Equal(t, 102, got["sliding"], "sliding window across the boundary, at Redis")
}

// TestRedisDown stops Redis and checks each fail mode's answer.
func TestRedisDown(t *testing.T) {
	for _, mode := range []struct {
		failOpen bool
		want     string
		result   string
	}{{true, "OK", "fail_open"}, {false, "OVER_LIMIT", "fail_closed"}} {
		rs := startRedis(t)
		c, err := service.NewRedisClient(service.RedisClientOptions{Addrs: []string{rs.Addr}, Timeout: 200 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		clk := core.NewManualClock(t0)
		o := redisOpts(c, clk, mode.failOpen)
		o.Service.Backend = service.NewRedis(c, service.RedisOptions{Clock: clk, FailOpen: mode.failOpen, Timeout: 200 * time.Millisecond})
		r := start(t, rules, o)
		require.Equal(t, ok, r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1")).OverallCode, "Redis up: allowed")
		rs.Stop()
		for range 3 {
			resp := r.ask(t, "edge", 0, desc("remote_address", "10.0.0.1"))
			assert.Equal(t, mode.want, resp.OverallCode.String(), "Redis down, fail-open=%v", mode.failOpen)
			assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining, "a fail-mode decision reports nothing remaining")
		}
		assert.Equal(t, ok, r.ask(t, "edge", 0, desc("path", "/api/health")).OverallCode, "unlimited rules need no Redis")
		assert.Equal(t, ok, r.ask(t, "edge", 0, desc("nothing", "x")).OverallCode, "unmatched descriptors need no Redis")
		assert.Contains(t, scrape(t, r), `edgelimit_envoy_rule_decisions_total{domain="edge",result="`+mode.result+`",rule="per-ip"} 3`,
			"the three fail-mode decisions are counted as such")
	}
}
