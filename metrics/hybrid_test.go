package metrics_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/prometheus/client_golang/prometheus"
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

// TestHybridLiveAccuracyExported: a hybrid node's Stats, through Fields and
// AddStats, export the live-accuracy counts of a known run. Two PoPs on a
// real Redis, no gossip: pop-b spends all 100 units of "k" and reconciles,
// pop-a admits 10 more and 5 of a calm identity without knowing; the audit
// finds 10 false allows out of 15 checked, in one read-only round trip.
func TestHybridLiveAccuracyExported(t *testing.T) {
	rdb, _ := redistest.Client(t)
	now := time.UnixMilli(1_800_000_000_500)
	newNode := func(pop string, rate float64) *hybrid.Node {
		n, err := hybrid.New(hybrid.Config{PoP: pop, Limit: core.PerWindow(100, 10*time.Second),
			Redis: rdb, Clock: core.NewManualClock(now), Resync: -1, AuditRate: rate})
		require.NoError(t, err)
		t.Cleanup(func() { n.Close(context.Background()) })
		return n
	}
	a, b := newNode("pop-a", 1), newNode("pop-b", 0)
	ctx := context.Background()
	allow := func(n *hybrid.Node, key string, times int) {
		for i := 0; i < times; i++ {
			d, err := n.AllowN(ctx, key, now, 1)
			require.NoError(t, err, "%s %q: %+v %v", n.ID(), key, d, err)
			require.True(t, d.Allowed, "%s %q: %+v %v", n.ID(), key, d, err)
		}
	}
	allow(b, "k", 100)
	err := b.Sync(ctx, now)
	require.NoError(t, err)
	allow(a, "k", 10)
	allow(a, "calm", 5)
	err = a.Audit(ctx, now)
	require.NoError(t, err)

	c := metrics.New()
	reg := register(t, c)
	c.AddStats("pop-a", func() map[string]float64 { return metrics.Fields(a.Stats()) })
	for stat, want := range map[string]float64{
		"audit_checked": 15, "audit_false_allows": 10, "audit_false_denies": 0,
		"audit_dropped": 0, "audit_round_trips": 1, "audit_errors": 0,
		"redis_round_trips": 0, "local_decisions": 15,
		"pending_redis": 2, "pending_gossip": 0,
	} {
		got := nodeStat(t, reg, "pop-a", stat)
		assert.Equal(t, want, got, "edgelimit_node_stat{node=\"pop-a\",stat=%q} = %v, want %v", stat, got, want)
	}
	err = a.Sync(ctx, now)
	require.NoError(t, err)
	got := nodeStat(t, reg, "pop-a", "pending_redis")
	assert.Equal(t, float64(0), got, "pending_redis after Sync = %v, want 0", got)
}
