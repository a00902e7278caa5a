package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gathered reads the value of the gauge or counter of family name whose
// labels include want; found is false when no such series was gathered.
func gathered(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) (v float64, found bool) {
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
				if w, ok := want[l.GetName()]; ok && w != l.GetValue() {
					continue next
				}
			}
			if g := m.GetGauge(); g != nil {
				return g.GetValue(), true
			}
			return m.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// TestRedisOutageVisibleUnderEscrow: a hybrid node with Escrow, whose
// decisions never wait for Redis, decides through an outage without an
// error, so decision_errors_total stays at 0; the outage shows as
// edgelimit_node_stat{stat="redis_down"} 1 (and redis_errors rising) from
// the node's Stats, back to 0 once Redis answers again.
func TestRedisOutageVisibleUnderEscrow(t *testing.T) {
	proc := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: proc.Addr, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { rdb.Close() })
	clk := core.NewManualClock(time.UnixMilli(1_800_000_000_500))
	node, err := hybrid.New(hybrid.Config{PoP: "pop-1", Limit: core.PerWindow(10, 10*time.Second), Redis: rdb,
		Clock: clk, Margin: 0.5, Escrow: true, Resync: -1})
	require.NoError(t, err, "hybrid.New")
	t.Cleanup(func() { node.Close(context.Background()) })
	c := metrics.New()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c), "register")
	lim := c.Wrap("api", node)
	c.AddStats("pop-1", func() map[string]float64 { return metrics.Fields(node.Stats()) })
	ctx := context.Background()
	down := map[string]string{"node": "pop-1", "stat": "redis_down"}

	_, err = lim.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err, "a decision with Redis up")
	require.NoError(t, node.Sync(ctx, clk.Now()), "Sync with Redis up")
	v, ok := gathered(t, reg, "edgelimit_node_stat", down)
	require.True(t, ok, "redis_down exported from the node's Stats")
	assert.Zero(t, v, "redis_down while Redis answers")

	require.NoError(t, proc.Kill(), "kill redis-server")
	for range 20 {
		_, err := lim.AllowN(ctx, "k", clk.Now(), 1)
		require.NoError(t, err, "under escrow no decision waits for Redis, so none fails")
	}
	assert.ErrorIs(t, node.Sync(ctx, clk.Now()), core.ErrUnavailable, "Sync with Redis dead")
	errs, _ := gathered(t, reg, "edgelimit_decision_errors_total", map[string]string{"limiter": "api"})
	assert.Zero(t, errs, "decision_errors_total under escrow during the outage: no decision reports it")
	v, _ = gathered(t, reg, "edgelimit_node_stat", down)
	assert.Equal(t, 1.0, v, "redis_down during the outage (one Redis)")
	v, _ = gathered(t, reg, "edgelimit_node_stat", map[string]string{"node": "pop-1", "stat": "redis_errors"})
	assert.Positive(t, v, "redis_errors during the outage")

	require.NoError(t, proc.Restart(), "restart redis-server")
	require.NoError(t, node.Sync(ctx, clk.Now()), "Sync once Redis is back")
	v, _ = gathered(t, reg, "edgelimit_node_stat", down)
	assert.Zero(t, v, "redis_down once Redis answers again")
}
