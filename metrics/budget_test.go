package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeStat reads edgelimit_node_stat{node, stat} from reg.
func nodeStat(t *testing.T, reg *prometheus.Registry, node, stat string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err, "gather")
	for _, f := range fams {
		if f.GetName() != "edgelimit_node_stat" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["node"] == node && got["stat"] == stat {
				return m.GetGauge().GetValue()
			}
		}
	}
	require.FailNow(t, fmt.Sprintf("edgelimit_node_stat{node=%q,stat=%q} not gathered", node, stat))
	return 0
}

// TestBudgetStatsExported: a budget limiter's Stats, through Fields and
// AddStats, export its Redis work at every scrape: after the Sync that
// takes the free-credit lease (one call, one round trip), a free unit and
// a unit decided at Redis, calls and round_trips are 2, then 3 after one
// more Redis-decided unit.
func TestBudgetStatsExported(t *testing.T) {
	rdb, _ := redistest.Client(t)
	clk := core.NewManualClock(time.UnixMilli(1_800_000_000_500))
	l, err := budget.New(budget.Config{PoP: "pop-1", Limit: core.PerWindow(10, time.Minute), PoPs: 5}, rdb, clk)
	require.NoError(t, err, "budget.New")
	t.Cleanup(func() { l.Close(context.Background()) })
	c := metrics.New()
	reg := register(t, c)
	c.AddStats("pop-1", func() map[string]float64 { return metrics.Fields(l.Stats()) })
	ctx := context.Background()
	require.NoError(t, l.Sync(ctx), "the Sync that takes the free-credit lease")
	allow := func(key string) {
		d, err := l.AllowN(ctx, key, clk.Now(), 1)
		require.NoError(t, err)
		require.True(t, d.Allowed, "%s admitted", key)
	}
	allow("k") // free credit
	allow("k") // decided at Redis
	assert.Equal(t, 2.0, nodeStat(t, reg, "pop-1", "calls"), "the lease's batch and one decision")
	assert.Equal(t, 2.0, nodeStat(t, reg, "pop-1", "round_trips"), "two round trips")
	allow("j") // free credit
	allow("j") // decided at Redis
	assert.Equal(t, 3.0, nodeStat(t, reg, "pop-1", "round_trips"), "read at the scrape, not at AddStats")
}

// TestBudgetOutageCountedByDecision: with Redis killed after one Sync, a
// lone budget PoP's decisions on its view are counted as what they are: the free unit
// allowed/local with no error, then four more allowed/local (its view's
// share of a limit of 5) and three denied/local, each of those seven with
// an error matching core.ErrUnavailable (the first because its call
// failed, the others because the PoP knows Redis is down), counted apart.
func TestBudgetOutageCountedByDecision(t *testing.T) {
	base, proc := redistest.Client(t)
	// One dial, no retry: a call to the killed server fails at once.
	rdb := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	clk := core.NewManualClock(time.UnixMilli(1_800_000_000_500))
	l, err := budget.New(budget.Config{PoP: "p1", Limit: core.PerWindow(5, time.Minute), PoPs: 1}, rdb, clk)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = l.Close(ctx) // Redis is dead: the last Sync fails
	})
	// a Sync before the outage takes the free-credit lease
	require.NoError(t, l.Sync(context.Background()))
	require.NoError(t, proc.Kill())
	c := metrics.New()
	reg := register(t, c)
	w := c.Wrap("api", l)
	for i := range 8 {
		// A deadline only a hang reaches: the refused calls fail at once.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := w.AllowN(ctx, "k", clk.Now(), 1)
		cancel()
		if i == 0 {
			require.NoError(t, err, "the free unit is decided without Redis")
		} else {
			require.ErrorIs(t, err, core.ErrUnavailable, "decision %d, on the view with Redis down", i+1)
		}
	}
	wantCounters(t, reg, "edgelimit_decisions_total", map[string]float64{
		"api/allowed/local": 5,
		"api/denied/local":  3,
	})
	wantCounters(t, reg, "edgelimit_decision_errors_total", map[string]float64{"api/unavailable": 7})
}
