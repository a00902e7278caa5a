package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memoryRun is big enough that the fixed costs (script cache, client
// buffers, a Node's empty shards) are a small share of the per-identity
// figures, and small enough for -race.
func memoryRun(addr string, extra ...string) []string {
	return append([]string{"-redis-addr", addr, "-pops", "3", "-identities", "1000",
		"-requests", "10000", "-limit", "10", "-window", "1s", "-seed", "5", "-mode", "redis,hybrid"}, extra...)
}

// memOf is a result's memory object, or nil.
func memOf(res map[string]any, part string) map[string]float64 {
	m, _ := res["memory"].(map[string]any)
	p, _ := m[part].(map[string]any)
	if p == nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range p {
		out[k] = v.(float64)
	}
	return out
}

// TestMemoryPerIdentityReported: a run on a real redis-server reports, per
// mode, Redis' used_memory per identity with keys (pure Redis: one string
// each; the hybrid: one hash per identity and window, a field per PoP)
// and the hybrid views' heap per entry, each in a sane range for its
// layout, with the article's references; the table prints the same counts.
func TestMemoryPerIdentityReported(t *testing.T) {
	p := redistest.Start(t)
	code, out, errOut := popSim(t, memoryRun(p.Addr, "-json")...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	r := decode(t, out)
	require.EqualValues(t, 2, len(r.Results), "results %v", r.Results)
	rd, hy := memOf(r.Results[0], "redis"), memOf(r.Results[1], "redis")
	require.NotNil(t, rd, "no redis memory for redis: %v", r.Results[0]["memory"])
	require.NotNil(t, hy, "no redis memory for hybrid: %v", r.Results[1]["memory"])
	assert.False(t, rd["identities"] < 500 || rd["identities"] > 1000 || rd["keys"] != rd["identities"],
		"redis: %v identities and %v keys, want one key for each of 500..1000", rd["identities"], rd["keys"])
	b := rd["bytes_per_identity"]
	assert.False(t, b <= 96 || b > 400 || rd["fields_per_hash"] != 0,
		"redis: %v bytes per identity (want 96..400 for a string key), %v fields", b, rd["fields_per_hash"])
	assert.Nil(t, memOf(r.Results[0], "view"), "redis mode measured a view: %v", r.Results[0]["memory"])
	assert.False(t, hy["identities"] != rd["identities"] || hy["keys"] < hy["identities"],
		"hybrid: %v identities with %v keys, want redis' %v with a key per window", hy["identities"], hy["keys"], rd["identities"])
	perKey := hy["bytes_per_identity"] * hy["identities"] / hy["keys"]
	assert.False(t, perKey < 96 || perKey > 500 || hy["fields_per_hash"] < 1 || hy["fields_per_hash"] > 3,
		"hybrid: %v bytes per hash (want 96..500), %v fields per hash (want 1..3 PoPs)", perKey, hy["fields_per_hash"])
	v := memOf(r.Results[1], "view")
	if assert.NotNil(t, v, "hybrid measured its view") {
		assert.False(t, v["entries"] != 3*v["entries_per_pop"] || v["entries_per_pop"] < hy["identities"]/3 ||
			v["bytes_per_entry"] < 100 || v["bytes_per_entry"] > 2000,
			"hybrid view %v: want entries on 3 PoPs, 100..2000 bytes each", v)
	}
	assert.False(t, v != nil && v["bytes_per_identity"] != v["heap_bytes"]/v["identities"], "hybrid view %v: want bytes per identity = heap / identities", v)
	ref := r.Results[1]["memory"].(map[string]any)
	assert.False(t, ref["article_bytes_per_identity"] != 96.0 || ref["cloudflare_bytes_per_identity"] != 24.0, "references %v, want 96 and 24", ref)

	code, table, errOut := popSim(t, memoryRun(p.Addr)...)
	require.EqualValues(t, 0, code, "table run: exit %d: %s", code, errOut)
	section := table[strings.Index(table, "memory per identity"):]
	require.True(t, strings.Contains(section, "article: 96 B for its two keys; Cloudflare: 24 B"), "no memory section with its references in:\n%s", table)
	for _, m := range []struct {
		mode string
		red  map[string]float64
	}{{"redis", rd}, {"hybrid", hy}} {
		assert.True(t, tableRowHas(section, m.mode, m.red["keys"], m.red["identities"]),
			"memory row of %s lacks %v keys and %v identities:\n%s", m.mode, m.red["keys"], m.red["identities"], section)
	}
}

// tableRowHas reports whether the memory section's row of mode shows keys
// and identities as its third and fourth cells.
func tableRowHas(section, mode string, keys, ids float64) bool {
	for _, line := range strings.Split(section, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == mode {
			return f[2] == fmt.Sprint(keys) && f[3] == fmt.Sprint(ids)
		}
	}
	return false
}

// TestRunLeavesNoKeys: a run on a -redis-addr server deletes each mode's
// keys once measured, so the server holds nothing of the run after.
func TestRunLeavesNoKeys(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	err := rdb.Set(ctx, "not-ours", "1", 0).Err()
	require.NoError(t, err)
	for _, network := range []string{"honest", "ideal"} {
		code, _, errOut := popSim(t, smallRun(p.Addr, "-mode", "all", "-network", network)...)
		require.EqualValues(t, 0, code, "%s: exit %d: %s", network, code, errOut)
		keys, err := rdb.Keys(ctx, "*").Result()
		require.NoError(t, err, "%s: reading the keys after the run", network)
		require.Equal(t, []string{"not-ours"}, keys, "%s: keys after the run; want only the one that was there before", network)
	}
}

// TestClusterRunLeavesNoKeysAndNoRedisMemory: on a Redis Cluster named by
// -redis-addr, every master is emptied of the run's keys, and no mode
// reports Redis memory (one node's used_memory would miss the others'),
// while the hybrid still reports its views.
func TestClusterRunLeavesNoKeysAndNoRedisMemory(t *testing.T) {
	c, cl := redistest.Cluster(t)
	code, out, errOut := popSim(t, smallRun(strings.Join(cl.Addrs(), ","), "-mode", "redis,hybrid")...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	for _, res := range decode(t, out).Results {
		assert.Nil(t, memOf(res, "redis"), "%s measured Redis memory on a cluster: %v", res["mode"], res["memory"])
		assert.False(t, res["mode"] == "hybrid" && memOf(res, "view") == nil, "hybrid on a cluster: no view memory in %v", res)
	}
	n := redistest.ClusterDBSize(t, c)
	require.EqualValues(t, 0, n, "%d keys left on the cluster's masters", n)
}
