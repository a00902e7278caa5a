package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	goredis "github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/require"
)

// handTrace is a trace of one identity (id0) over two PoPs, PoP 0 beside
// Redis (round trip 0) and PoP 1 across the world (300 ms: 150 ms each
// way), with no jitter, on a real Redis.
func handTrace(t *testing.T, limit int64, reqs []traffic.Request) (*Env, *goredis.Client) {
	t.Helper()
	rdb, p := redistest.Client(t)
	c := traffic.Config{Scenario: "hand", PoPs: 2, Identities: 1, Requests: len(reqs),
		Limit: limit, Window: 10 * time.Second, Seed: 1}
	tr := &traffic.Trace{Config: c, Duration: 2 * time.Second, Requests: reqs}
	net, err := netmodel.WorldWide(2, 0, 300*time.Millisecond)
	require.NoError(t, err)
	e := NewEnv(tr, net)
	e.RedisAddr, e.Namespace, e.Jitter = p.Addr, t.Name(), 0
	return e, rdb
}

// TestRedisOrdersCallsByArrival: with every request decided at Redis, the
// far PoP's earlier request reaches Redis after the near PoP's later one,
// so Redis admits the near one (limit 1) and the far one is denied, and
// answered a whole round trip (300 ms) after it was made.
func TestRedisOrdersCallsByArrival(t *testing.T) {
	reqs := []traffic.Request{{At: 0, PoP: 1, N: 1}, {At: 100 * time.Millisecond, PoP: 0, N: 1}}
	for _, mode := range []string{"redis", "redis-servertime"} {
		e, _ := handTrace(t, 1, reqs)
		e.Namespace += mode
		run := honestRunners[mode]
		o, err := run(context.Background(), e)
		require.NoError(t, err)
		require.False(t, o.allowed[0] || !o.allowed[1], "%s: allowed = %v; want the far (earlier) request denied, the near one admitted", mode, o.allowed)
		require.False(t, o.latency[0] != 300*time.Millisecond || o.latency[1] != 0, "%s: latencies %v, want 300ms and 0", mode, o.latency)
	}
}

// faultEnv is a small generated trace on the honest network with faults.
func faultEnv(t *testing.T, f netmodel.Faults) *Env {
	t.Helper()
	e := testEnv(t, "mixed")
	_, p := redistest.Client(t)
	e.RedisAddr, e.Faults = p.Addr, f
	return e
}
