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
// buffers) are a small share of the per-identity figures, and small
// enough for -race.
func memoryRun(addr string, extra ...string) []string {
	return append([]string{"-redis-addr", addr, "-pops", "3", "-identities", "1000",
		"-requests", "10000", "-limit", "10", "-window", "1s", "-seed", "5", "-mode", "redis"}, extra...)
}

// redisMemoryRun is memoryRun three times over: pure Redis' keys that a
// Redis on the run's clock would have expired are deleted before
// measuring (about 2,000 of 3,000 identities keep one), and the server's
// own growth (script cache, client buffers: about 130 KB, paid by the
// first run on a server) must stay under half of the per-identity figure.
func redisMemoryRun(addr string, extra ...string) []string {
	return append([]string{"-redis-addr", addr, "-pops", "3", "-identities", "3000",
		"-requests", "30000", "-limit", "10", "-window", "1s", "-seed", "5", "-mode", "redis"}, extra...)
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

// TestMemoryPerIdentityReported: a run on a real redis-server reports pure
// Redis' used_memory per identity with keys (one string each), in a sane
// range for its layout, with the article's references and no view; the
// table prints the same counts. (The budget mode's figures:
// TestBudgetRowAndNote.)
func TestMemoryPerIdentityReported(t *testing.T) {
	p := redistest.Start(t)
	code, out, errOut := popSim(t, redisMemoryRun(p.Addr, "-json")...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	r := decode(t, out)
	require.EqualValues(t, 1, len(r.Results), "results %v", r.Results)
	rd := memOf(r.Results[0], "redis")
	require.NotNil(t, rd, "no redis memory for redis: %v", r.Results[0]["memory"])
	assert.False(t, rd["identities"] < 1000 || rd["identities"] > 3000 || rd["keys"] != rd["identities"],
		"redis: %v identities and %v keys, want one key for each of 1,000..3,000 (those live by the run's clock)", rd["identities"], rd["keys"])
	b := rd["bytes_per_identity"]
	assert.False(t, b <= 96 || b > 400 || rd["fields_per_hash"] != 0,
		"redis: %v bytes per identity (want 96..400 for a string key), %v fields", b, rd["fields_per_hash"])
	assert.Nil(t, memOf(r.Results[0], "view"), "redis mode measured a view: %v", r.Results[0]["memory"])
	ref := r.Results[0]["memory"].(map[string]any)
	assert.False(t, ref["article_bytes_per_identity"] != 96.0 || ref["cloudflare_bytes_per_identity"] != 24.0, "references %v, want 96 and 24", ref)

	code, table, errOut := popSim(t, redisMemoryRun(p.Addr)...)
	require.EqualValues(t, 0, code, "table run: exit %d: %s", code, errOut)
	section := table[strings.Index(table, "memory per identity"):]
	require.True(t, strings.Contains(section, "article: 96 B for its two keys; Cloudflare: 24 B"), "no memory section with its references in:\n%s", table)
	assert.True(t, tableRowHas(section, "redis", rd["keys"], rd["identities"]),
		"memory row of redis lacks %v keys and %v identities:\n%s", rd["keys"], rd["identities"], section)
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
// while budget still reports its views.
func TestClusterRunLeavesNoKeysAndNoRedisMemory(t *testing.T) {
	c, cl := redistest.Cluster(t)
	code, out, errOut := popSim(t, smallRun(strings.Join(cl.Addrs(), ","), "-mode", "redis,budget")...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	for _, res := range decode(t, out).Results {
		assert.Nil(t, memOf(res, "redis"), "%s measured Redis memory on a cluster: %v", res["mode"], res["memory"])
		assert.False(t, res["mode"] == "budget" && memOf(res, "view") == nil, "budget on a cluster: no view memory in %v", res)
	}
	n := redistest.ClusterDBSize(t, c)
	require.EqualValues(t, 0, n, "%d keys left on the cluster's masters", n)
}
