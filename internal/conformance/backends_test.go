package conformance_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/conformance"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/budget"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
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
			lim, err := local.New(l, local.WithMonotonic(frozen{}))
			lastLocal = lim
			return lim, err
		}, Stored: func(t *testing.T) int { return lastLocal.Len() }},
		{Name: "redis", New: onRedis(c, func(l core.Limit) (core.Limiter, error) {
			return redis.New(c, l, hangOnly)
		}), Stored: dbsize(c)},
		{Name: "redis-pipelined", New: onRedis(c, func(l core.Limit) (core.Limiter, error) {
			return redis.New(c, l, redis.WithPipelining(50_000, 64), hangOnly)
		}), Stored: dbsize(c)},
		{Name: "redis-bucketed", New: onRedis(c, func(l core.Limit) (core.Limiter, error) {
			return redis.New(c, l, redis.WithBuckets(3), hangOnly)
		}), Stored: dbsize(c)},
		{Name: "redis-cluster", New: onCluster(cc, func(l core.Limit) (core.Limiter, error) {
			return redis.New(cc, l, hangOnly)
		}), Stored: clusterSize(cc)},
		{Name: "redis-cluster-pipelined", New: onCluster(cc, func(l core.Limit) (core.Limiter, error) {
			return redis.New(cc, l, redis.WithPipelining(100_000, 32), hangOnly)
		}), Stored: clusterSize(cc)},
		{Name: "budget", Algorithms: []core.Algorithm{core.SlidingWindow},
			New: onRedis(c, budgetPoP(c)), Stored: dbsize(c)},
		{Name: "budget-cluster", Algorithms: []core.Algorithm{core.SlidingWindow},
			New: onCluster(cc, budgetPoP(cc)), Stored: clusterSize(cc)},
	}
	for _, b := range backends {
		conformance.Run(t, b)
	}
}

// hangOnly gives the Redis limiters a call timeout only a hang reaches
// (DefaultTimeout is 1 s, which a loaded machine's queue of concurrent
// calls can pass): the suite checks what is decided, not how fast.
var hangOnly = redis.WithTimeout(30 * time.Second)

// onRedis empties the shared server before building a limiter.
func onRedis(c *goredis.Client, build func(core.Limit) (core.Limiter, error)) func(*testing.T, core.Limit) (core.Limiter, error) {
	return func(t *testing.T, l core.Limit) (core.Limiter, error) {
		err := c.FlushDB(context.Background()).Err()
		require.NoError(t, err, "FLUSHDB")
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
		require.NoError(t, err, "DBSIZE")
		return int(n)
	}
}

var pops int

// budgetPoP builds a lone PoP of the budget limiter (PoPs 1: its free
// credit and grants are all the budget there is, so it must decide as pure
// Redis does). Its clock stands at the suite's epoch + 1 s, where the
// suite resets a key: a Reset forgets the windows around the clock.
func budgetPoP(c goredis.UniversalClient) func(core.Limit) (core.Limiter, error) {
	return func(l core.Limit) (core.Limiter, error) {
		pops++
		return budget.New(budget.Config{PoP: fmt.Sprintf("pop%d", pops), Limit: l, PoPs: 1}, c, core.NewManualClock(conformance.Epoch.Add(time.Second)))
	}
}

// frozen is a local.Monotonic that never advances: the local limiter then
// ages no state by the real time the suite takes on a loaded machine (as
// hangOnly's slack keeps the Redis limiters' keys), and decides on the
// stamps alone.
type frozen struct{}

func (frozen) MonotonicMillis() int64 { return 0 }
