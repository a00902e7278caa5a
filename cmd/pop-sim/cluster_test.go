package main

import (
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
)

// decisionFields are the figures a mode's decisions alone fix: equal on a
// single node and on a cluster for the same seed. Round trips are not among
// them for the hybrid, whose reconcile pays one round trip per master a
// batch touches.
var decisionFields = []string{"decisions", "allowed", "denied", "false_allows", "false_denies",
	"decision_error_pct", "max_overadmission", "p99_overadmission", "nats_messages",
	"nats_bytes", "added_latency_p50_ms", "added_latency_p99_ms"}

// TestClusterRunEqualsSingleNode runs one small simulation of every mode on
// a single redis-server, on a 3-master Redis Cluster named by the list of
// its nodes, and on the same cluster named by one node (found a cluster by
// its INFO): every decision figure must be equal, pure Redis' round trips
// too, and the hybrid's round trips at least the single node's.
func TestClusterRunEqualsSingleNode(t *testing.T) {
	single := redistest.Start(t)
	_, cl := redistest.Cluster(t)
	addrs := cl.Addrs()
	var runs []map[string]map[string]any
	for _, addr := range []string{single.Addr, strings.Join(addrs, ","), addrs[1]} {
		code, out, errOut := popSim(t, smallRun(addr, "-clock-skew", "300ms")...)
		if code != 0 {
			t.Fatalf("-redis-addr %s: exit %d: %s", addr, code, errOut)
		}
		byMode := map[string]map[string]any{}
		for _, r := range decode(t, out).Results {
			byMode[r["mode"].(string)] = r
		}
		if len(byMode) != 5 {
			t.Fatalf("-redis-addr %s: modes %v, want 5 with clock skew", addr, byMode)
		}
		runs = append(runs, byMode)
	}
	for i, run := range runs[1:] {
		for mode, want := range runs[0] {
			got := run[mode]
			for _, f := range decisionFields {
				if got[f] != want[f] {
					t.Errorf("cluster run %d, %s: %s = %v, single node %v", i+1, mode, f, got[f], want[f])
				}
			}
			rt, rt0 := got["redis_round_trips"].(float64), want["redis_round_trips"].(float64)
			if strings.HasPrefix(mode, "redis") && rt != rt0 || rt < rt0 {
				t.Errorf("cluster run %d, %s: %v round trips, single node %v", i+1, mode, rt, rt0)
			}
		}
	}
	t.Logf("hybrid round trips: single node %v, cluster %v",
		runs[0]["hybrid"]["redis_round_trips"], runs[1]["hybrid"]["redis_round_trips"])
}

// TestRedisClusterFlagStartsOne runs pure-Redis mode on the private cluster
// -redis-cluster starts, and checks the note that says how round trips are
// counted there.
func TestRedisClusterFlagStartsOne(t *testing.T) {
	code, out, errOut := popSim(t, "-redis-cluster", "-mode", "redis", "-pops", "2",
		"-identities", "50", "-requests", "500", "-limit", "5", "-window", "1s", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "one per node it touches") {
		t.Fatalf("no cluster note in:\n%s", out)
	}
	r := decode(t, out)
	if len(r.Results) != 1 || r.Results[0]["decisions"] != 500.0 || r.Results[0]["round_trips_per_decision"] != 1.0 {
		t.Fatalf("results %v", r.Results)
	}
}
