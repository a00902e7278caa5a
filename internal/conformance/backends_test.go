package conformance_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/conformance"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	goredis "github.com/redis/go-redis/v9"
)

// TestConformance runs the one suite over every backend: a new backend is
// one line in this table. Redis-backed entries share one private
// redis-server (or one private three-master Redis Cluster), emptied before
// each limiter is built.
func TestConformance(t *testing.T) {
	c, _ := redistest.Client(t)
	cc, _ := redistest.Cluster(t)
	var lastLocal *local.Limiter
	backends := []conformance.Backend{
		{Name: "local", New: func(t *testing.T, l core.Limit) (core.Limiter, error) {
			lim, err := local.New(l)
			lastLocal = lim
			return lim, err
		}, Stored: func(t *testing.T) int { return lastLocal.Len() }},
		{Name: "redis", New: onRedis(c, func(l core.Limit) (core.Limiter, error) {
			return redis.New(c, l)
		}), Stored: dbsize(c)},
		{Name: "redis-pipelined", New: onRedis(c, func(l core.Limit) (core.Limiter, error) {
			return redis.New(c, l, redis.WithPipelining(50_000, 64))
		}), Stored: dbsize(c)},
		{Name: "redis-bucketed", New: onRedis(c, func(l core.Limit) (core.Limiter, error) {
			return redis.New(c, l, redis.WithBuckets(3))
		}), Stored: dbsize(c)},
		{Name: "redis-cluster", New: onCluster(cc, func(l core.Limit) (core.Limiter, error) {
			return redis.New(cc, l)
		}), Stored: clusterSize(cc)},
		{Name: "redis-cluster-pipelined", New: onCluster(cc, func(l core.Limit) (core.Limiter, error) {
			return redis.New(cc, l, redis.WithPipelining(100_000, 32))
		}), Stored: clusterSize(cc)},
		{Name: "hybrid-local-first", Algorithms: []core.Algorithm{core.SlidingWindow},
			New: onRedis(c, hybridNode(c, 0)), Stored: dbsize(c)},
		{Name: "hybrid-margin-0.3", Algorithms: []core.Algorithm{core.SlidingWindow},
			New: onRedis(c, hybridNode(c, 0.3)), Stored: dbsize(c)},
		{Name: "hybrid-cluster-margin-0.3", Algorithms: []core.Algorithm{core.SlidingWindow},
			New: onCluster(cc, hybridNode(cc, 0.3)), Stored: clusterSize(cc)},
	}
	for _, b := range backends {
		conformance.Run(t, b)
	}
}

// onRedis empties the shared server before building a limiter.
func onRedis(c *goredis.Client, build func(core.Limit) (core.Limiter, error)) func(*testing.T, core.Limit) (core.Limiter, error) {
	return func(t *testing.T, l core.Limit) (core.Limiter, error) {
		if err := c.FlushDB(context.Background()).Err(); err != nil {
			t.Fatalf("FLUSHDB: %v", err)
		}
		return build(l)
	}
}

// onCluster empties every master of the cluster before building a limiter.
func onCluster(c *goredis.ClusterClient, build func(core.Limit) (core.Limiter, error)) func(*testing.T, core.Limit) (core.Limiter, error) {
	return func(t *testing.T, l core.Limit) (core.Limiter, error) {
		redistest.FlushCluster(t, c)
		return build(l)
	}
}

func clusterSize(c *goredis.ClusterClient) func(*testing.T) int {
	return func(t *testing.T) int { return int(redistest.ClusterDBSize(t, c)) }
}

func dbsize(c *goredis.Client) func(*testing.T) int {
	return func(t *testing.T) int {
		n, err := c.DBSize(context.Background()).Result()
		if err != nil {
			t.Fatalf("DBSIZE: %v", err)
		}
		return int(n)
	}
}

var pops int

// hybridNode builds a lone PoP (no gossip) with the given headroom margin.
func hybridNode(c goredis.UniversalClient, margin float64) func(core.Limit) (core.Limiter, error) {
	return func(l core.Limit) (core.Limiter, error) {
		pops++
		return hybrid.New(hybrid.Config{PoP: fmt.Sprintf("pop%d", pops), Limit: l, Redis: c, Margin: margin})
	}
}
