package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decisionFields are the figures a mode's decisions alone fix: equal on a
// single node and on a cluster for the same seed.
var decisionFields = []string{"decisions", "allowed", "denied", "false_allows", "false_denies",
	"decision_error_pct", "max_overadmission", "p99_overadmission", "nats_messages",
	"nats_bytes", "added_latency_p50_ms", "added_latency_p99_ms"}

// TestClusterRunEqualsSingleNode runs one small simulation of every mode on
// a single redis-server, on a 3-master Redis Cluster named by the list of
// its nodes, and on the same cluster named by one node (found a cluster by
// its INFO). On the ideal network (pure Redis and local) every decision
// figure must be equal, pure Redis' round trips too. On the honest network
// (budget too) the two namings of the cluster must agree on everything, and
// pure Redis with the single node.
func TestClusterRunEqualsSingleNode(t *testing.T) {
	single := redistest.Start(t)
	_, cl := redistest.Cluster(t)
	addrs := cl.Addrs()
	targets := []string{single.Addr, strings.Join(addrs, ","), addrs[1]}
	ideal := clusterRuns(t, targets, "-network", "ideal")
	for i, run := range ideal[1:] {
		for mode, want := range ideal[0] {
			compareRun(t, fmt.Sprintf("ideal, cluster run %d, %s", i+1, mode), run[mode], want)
			rt, rt0 := run[mode]["redis_round_trips"].(float64), want["redis_round_trips"].(float64)
			assert.False(t, strings.HasPrefix(mode, "redis") && rt != rt0 || rt < rt0, "cluster run %d, %s: %v round trips, single node %v", i+1, mode, rt, rt0)
		}
	}
	honest := clusterRuns(t, targets)
	for mode, want := range honest[1] {
		compareRun(t, "honest, cluster by one node, "+mode, honest[2][mode], want)
		if strings.HasPrefix(mode, "redis") {
			compareRun(t, "honest, cluster against single node, "+mode, want, honest[0][mode])
		}
	}
	t.Logf("budget round trips: single node %v, cluster %v",
		honest[0]["budget"]["redis_round_trips"], honest[1]["budget"]["redis_round_trips"])
}

// clusterRuns runs the small skewed simulation on each Redis target, with
// extra flags, and returns each run's results by mode.
func clusterRuns(t *testing.T, targets []string, extra ...string) []map[string]map[string]any {
	t.Helper()
	var runs []map[string]map[string]any
	for _, addr := range targets {
		code, out, errOut := popSim(t, append(smallRun(addr, "-clock-skew", "300ms"), extra...)...)
		require.EqualValues(t, 0, code, "-redis-addr %s: exit %d: %s", addr, code, errOut)
		byMode := map[string]map[string]any{}
		for _, r := range decode(t, out).Results {
			byMode[r["mode"].(string)] = r
		}
		want := 5 // redis, local, redis-servertime with clock skew, budget and budget-gossip on the honest network
		if slices.Contains(extra, "ideal") {
			want = 3
		}
		require.EqualValues(t, want, len(byMode), "-redis-addr %s %v: modes %v, want %d with clock skew", addr, extra, byMode, want)
		runs = append(runs, byMode)
	}
	return runs
}

// compareRun reports each decision figure of got that differs from want.
func compareRun(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	for _, f := range decisionFields {
		assert.Equal(t, want[f], got[f], "%s: %s", what, f)
	}
}

// TestRedisClusterFlagStartsOne runs pure-Redis mode on the private cluster
// -redis-cluster starts, and checks the note that says how round trips are
// counted there.
func TestRedisClusterFlagStartsOne(t *testing.T) {
	code, out, errOut := popSim(t, "-redis-cluster", "-mode", "redis", "-pops", "2",
		"-identities", "50", "-requests", "500", "-limit", "5", "-window", "1s", "-json")
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	require.True(t, strings.Contains(out, "round trips are counted as on one node"), "no cluster note in:\n%s", out)
	r := decode(t, out)
	require.False(t, len(r.Results) != 1 || r.Results[0]["decisions"] != 500.0 || r.Results[0]["round_trips_per_decision"] != 1.0, "results %v", r.Results)
}
