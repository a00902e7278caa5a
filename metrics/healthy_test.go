package metrics_test

import (
	"context"
	"sync"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// counterValue reads the counter of family name whose labels are exactly
// want (name=value pairs); absent is 0.
func counterValue(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err, "gather")
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := want[l.GetName()]; ok && v != l.GetValue() {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// TestHealthyRedisCountsNoErrors: on a fresh, healthy redis-server (7.0 on
// Debian 12), a hooked client's first connections and first script calls
// are not errors. Every new connection's CLIENT MAINT_NOTIFICATIONS and
// CLIENT SETINFO (which Redis 7.0 refuses and go-redis ignores) and each
// script's first EVALSHA (NOSCRIPT, answered by sending the script) were
// counted as reply errors: 41 in this run before the fix, 4 to 8 per PoP in
// a deployment. NOSCRIPT is now counted apart, as type="noscript".
func TestHealthyRedisCountsNoErrors(t *testing.T) {
	proc := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: proc.Addr, PoolSize: 8})
	t.Cleanup(func() { rdb.Close() })
	c := metrics.New()
	reg := register(t, c)
	rdb.AddHook(c.RedisHook("main"))
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, alg := range core.Algorithms {
		l, err := redisbackend.New(rdb, core.Limit{Max: 100, Window: time.Minute, Algorithm: alg})
		require.NoError(t, err)
		for g := 0; g < 8; g++ { // several connections at once
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					_, err := l.Allow(ctx, "k")
					if !assert.NoError(t, err) {
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	n := counterValue(t, reg, "edgelimit_redis_errors_total", map[string]string{"type": "reply"})
	assert.Equal(t, float64(0), n, "redis_errors_total{type=\"reply\"} = %v on a healthy Redis, want 0", n)
	n = counterValue(t, reg, "edgelimit_redis_errors_total", map[string]string{"type": "transport"})
	assert.Equal(t, float64(0), n, "redis_errors_total{type=\"transport\"} = %v on a healthy Redis, want 0", n)
}
