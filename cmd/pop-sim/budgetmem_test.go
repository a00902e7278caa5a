package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/budget"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountBudgetKeysIsExact: on a real redis-server holding the budget
// layout's keys of two namespaces and keys of another layout, the budget
// count of one namespace finds its keys alone, counts an identity once
// however many windows' hashes hold it, and counts the bucket hashes and
// their fields, not the retry guards or hot sets.
func TestCountBudgetKeysIsExact(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	ns := "popsim-1-budget"
	set := func(key string, fields ...string) {
		t.Helper()
		var args []any
		for _, f := range fields {
			args = append(args, f, "1:0:0")
		}
		require.NoError(t, rdb.HSet(ctx, key, args...).Err(), "HSET %s", key)
	}
	set("{"+ns+":10/1s:g0}:b0:e7", "id1", "id2")        // epoch 7 (windows 14, 15) of bucket 0
	set("{"+ns+":10/1s:g0}:b0:e8", "id1", "id2", "id3") // the same identities, and one more, in epoch 8
	set("{"+ns+":10/1s:g1}:b17:e8", "id4")
	set("{"+ns+":10/1s:g1}:b17:e-1", "id5")                                    // an epoch before the Unix epoch
	require.NoError(t, rdb.Set(ctx, "{"+ns+":10/1s:g0}:seq:42", "3", 0).Err()) // a retry guard
	require.NoError(t, rdb.SAdd(ctx, "{"+ns+":10/1s:g1}:hot:8", "id9").Err())  // a hot set: its member is no identity of the count
	set("{popsim-2-budget:10/1s:g0}:b0:e7", "other")                           // another run's namespace
	set(ns+":{id6}:7", "pop0")                                                 // another layout, not the budget's
	c, err := countBudgetKeys(ctx, rdb, ns)
	require.NoError(t, err)
	assert.Equal(t, keyCount{keys: 6, identities: 5, hashes: 4, fields: 7}, c,
		"want 6 keys of the layout, identities id1..id5, 4 bucket hashes holding 2+3+1+1 fields")
	assert.Equal(t, "{"+ns+":*", budgetPattern(ns), "the layout's SCAN pattern")
}

// TestBudgetRowAndNote: a redis,budget run on a real redis-server gives
// budget a memory row (Redis bytes per identity, identities as distinct
// bucket-hash fields, the Machines' heap per entry and per identity; the
// keys of epochs the run's clock expired deleted first, and said), its
// Machines' Stats in the JSON, and a "budget:" note that says the same
// figures under the table; the run leaves no key of either layout.
func TestBudgetRowAndNote(t *testing.T) {
	rdb, p := redistest.Client(t)
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "not-ours", "1", 0).Err())
	args := append(memoryRun(p.Addr), "-mode", "redis,budget")
	code, out, errOut := popSim(t, append(args, "-json")...)
	require.EqualValues(t, 0, code, "exit %d: %s", code, errOut)
	r := decode(t, out)
	require.Len(t, r.Results, 2, "results %v", r.Results)
	rd, bu := memOf(r.Results[0], "redis"), memOf(r.Results[1], "redis")
	require.NotNil(t, rd, "no redis memory for redis: %v", r.Results[0]["memory"])
	require.NotNil(t, bu, "no redis memory for budget: %v", r.Results[1]["memory"])
	seen := memOf(r.Results[1], "view")["identities"]
	assert.False(t, bu["identities"] < seen/2 || bu["identities"] > seen,
		"budget: %v identities at Redis, want at most the %v that made requests and at least half", bu["identities"], seen)
	assert.False(t, bu["keys"] >= bu["identities"] || bu["fields_per_hash"] < 2,
		"budget: %v keys, %v fields per hash for %v identities: want buckets of many identities", bu["keys"], bu["fields_per_hash"], bu["identities"])
	assert.False(t, bu["bytes_per_identity"] < 10 || bu["bytes_per_identity"] > 1000 || bu["bytes_per_identity"] != bu["used_bytes"]/bu["identities"],
		"budget: %v bytes per identity, want used_memory grown / identities in 10..1000", bu["bytes_per_identity"])
	v := memOf(r.Results[1], "view")
	if assert.NotNil(t, v, "budget measured its Machines' heap") {
		assert.False(t, v["entries"] != 3*v["entries_per_pop"] || v["bytes_per_entry"] < 100 || v["bytes_per_entry"] > 2000,
			"budget view %v: want entries on 3 PoPs, 100..2000 bytes each", v)
	}
	assert.Nil(t, r.Results[0]["budget"], "redis mode reports budget Stats")
	st, _ := r.Results[1]["budget"].(map[string]any)
	require.NotNil(t, st, "budget mode: no Stats in %v", r.Results[1])
	decisions := r.Results[1]["decisions"].(float64)
	assert.InDelta(t, st["items"].(float64)/decisions, st["items_per_decision"], 1e-12, "items per decision")
	assert.Equal(t, r.Results[1]["redis_round_trips"], st["round_trips"], "Stats' round trips against the row's")

	code, table, errOut := popSim(t, args...)
	require.EqualValues(t, 0, code, "table run: exit %d: %s", code, errOut)
	section := table[strings.Index(table, "memory per identity"):]
	assert.True(t, tableRowHas(section, "budget", bu["keys"], bu["identities"]),
		"memory row of budget lacks %v keys and %v identities:\n%s", bu["keys"], bu["identities"], section)
	assert.Positive(t, bu["expired_keys"], "budget: keys of past epochs deleted before measuring (6 windows of 1 s, a slack of 1 s)")
	assert.Positive(t, rd["expired_keys"], "redis: keys past their TTL by the run's clock deleted before measuring")
	assert.Contains(t, section, fmt.Sprintf("budget: %v keys deleted before measuring", bu["expired_keys"]), "the memory section names the keys deleted")
	credit := "none"
	if c := st["free_credit"].(float64); c > 0 {
		credit = fmt.Sprintf("%v unit(s) per identity, window and PoP", c)
	}
	want := fmt.Sprintf("note: budget: free credit %s; items/decision %.4f, calls/decision %.4f, round trips/decision %.4f",
		credit, st["items_per_decision"], st["calls_per_decision"], st["round_trips"].(float64)/decisions)
	assert.Contains(t, table, want, "the budget note under the table")
	bySource := st["decisions_by_source"].(map[string]any)
	assert.Contains(t, table, fmt.Sprintf("by source deny-cache %v (", bySource["deny-cache"]), "the budget note's sources, in the Machine's order")
	assert.Positive(t, st["paid_late"], "requests Redis denied that the PoP's budget paid at the reply (this run has some)")
	assert.Contains(t, table, fmt.Sprintf("; paid late %v (", st["paid_late"]), "the budget note's requests paid late")
	for _, kind := range []string{"denies", "allows"} {
		var split []string
		for _, c := range r.Results[1]["classes"].([]any) {
			cl := c.(map[string]any)
			by, _ := cl["false_"+kind+"_by_source"].(map[string]any)
			for _, src := range []string{"deny-cache", "full", "grant", "free", "fallback", "redis"} {
				if k, ok := by[src]; ok && k.(float64) > 0 {
					split = append(split, fmt.Sprintf("%s %v", src, k))
				}
			}
			if len(split) > 0 {
				assert.Contains(t, table, fmt.Sprintf("%s: %s", cl["class"], strings.Join(split, ", ")), "the budget note's false %s of class %s by source", kind, cl["class"])
			}
			split = split[:0]
		}
		assert.Contains(t, table, "; false "+kind+" by source: ", "the budget note splits false %s", kind)
	}

	keys, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.Equal(t, []string{"not-ours"}, keys, "keys after the runs; want only the one that was there before")
}

// budgetRun runs pop-sim's budget mode alone on memoryRun's trace over
// windows of window, with flags, on the Redis at addr; it returns the
// report, its one result and that result's budget Stats. what names the
// run in failures.
func budgetRun(t *testing.T, addr, window, what string, flags ...string) (jsonReport, map[string]any, map[string]any) {
	t.Helper()
	args := append(memoryRun(addr), "-window", window, "-mode", "budget", "-json")
	code, out, errOut := popSim(t, append(args, flags...)...)
	require.EqualValues(t, 0, code, "%s: exit %d: %s", what, code, errOut)
	r := decode(t, out)
	require.Len(t, r.Results, 1, "%s: one budget row", what)
	st, _ := r.Results[0]["budget"].(map[string]any)
	require.NotNil(t, st, "%s: budget Stats in %v", what, r.Results[0])
	return r, r.Results[0], st
}

// TestFreeCreditFlag: -free-credit sets the budget Machines' free credit:
// 0 resolves to budget.AutoFreeCredit's choice for the run's limit and
// PoPs (one unit for 10 per 10 s over 3 PoPs, none for 10 a second), 1 is
// one unit, with decisions from it, and -1 is none, with no decision from
// free credit.
func TestFreeCreditFlag(t *testing.T) {
	_, p := redistest.Client(t)
	require.Equal(t, int64(1), budget.AutoFreeCredit(core.PerWindow(10, 10*time.Second), 3), "10 per 10 s over 3 PoPs: one unit")
	require.Equal(t, int64(0), budget.AutoFreeCredit(core.PerWindow(10, time.Second), 3), "10 a second over 3 PoPs: none")
	for _, tc := range []struct {
		flag, window string
		want         float64
	}{{"0", "10s", 1}, {"0", "1s", 0}, {"1", "1s", 1}, {"-1", "10s", 0}} {
		flag, want := tc.flag, tc.want
		_, _, st := budgetRun(t, p.Addr, tc.window, "-free-credit "+flag, "-free-credit", flag)
		assert.Equal(t, want, st["free_credit"], "-free-credit %s: the Machines' free credit", flag)
		free := st["decisions_by_source"].(map[string]any)["free"].(float64)
		if want > 0 {
			assert.Positive(t, free, "-free-credit %s: decisions from free credit", flag)
		} else {
			assert.Zero(t, free, "-free-credit %s: no decision from free credit", flag)
		}
	}
}

// TestBudgetPoPsFlag: -budget-pops sets the PoPs every budget Machine is
// configured with, whatever the trace has (0: the trace's), and the budget
// note names a difference.
func TestBudgetPoPsFlag(t *testing.T) {
	_, p := redistest.Client(t)
	for _, tc := range []struct {
		flag string
		want float64
	}{{"0", 3}, {"1", 1}, {"5", 5}} {
		r, _, st := budgetRun(t, p.Addr, "10s", "-budget-pops "+tc.flag, "-budget-pops", tc.flag)
		assert.Equal(t, tc.want, st["pops"], "-budget-pops %s: the Machines' PoPs", tc.flag)
		assert.Equal(t, 3.0, st["trace_pops"], "-budget-pops %s: the trace's PoPs", tc.flag)
		named := slices.ContainsFunc(r.Notes, func(n string) bool {
			return strings.Contains(n, fmt.Sprintf("Machines configured for %v PoPs of 3", tc.want))
		})
		assert.Equal(t, tc.flag != "0", named, "-budget-pops %s: the note names a configured PoPs other than the trace's", tc.flag)
	}
}

// TestRunClockExpired: a bucket hash of epoch e expires at exactly
// (2e+4)·window + slack by the run's clock, a hot set of window x and its
// order counter at (x+3)·window + slack, and the retry guards, the
// announcements and other layouts' keys never (they are not per identity).
func TestRunClockExpired(t *testing.T) {
	const w, slack = 1000, 100
	ns := "{popsim-1-budget:g3}"
	for _, tc := range []struct {
		key  string
		dies int64 // the first end at which it is expired; 0: never
	}{
		{ns + ":b7:e10", (2*10+4)*w + slack},
		{ns + ":b7:e-1", (2*-1+4)*w + slack},
		{ns + ":hz:21", (21+3)*w + slack},
		{ns + ":hz:21:n", (21+3)*w + slack},
		{ns + ":seq:9a", 0},
		{ns + ":dseq:9a", 0},
		{ns + ":fa:9a", 0},
		{ns + ":fc", 0},
		{"popsim-1-redis:{id1}:s:10/1s", 0},
	} {
		if tc.dies == 0 {
			assert.False(t, runClock{end: 1 << 40, window: w, slack: slack}.expired(tc.key), "%s expired", tc.key)
			continue
		}
		assert.False(t, runClock{end: tc.dies - 1, window: w, slack: slack}.expired(tc.key), "%s expired 1 ms early", tc.key)
		assert.True(t, runClock{end: tc.dies, window: w, slack: slack}.expired(tc.key), "%s not expired at its expiry", tc.key)
	}
}

// TestExpireBudgetKeys: on a real redis-server, expireBudgetKeys deletes
// exactly the budget keys of its namespace that the run's clock expired,
// says how many, and leaves the live ones, the other namespace's and other
// layouts' keys alone.
func TestExpireBudgetKeys(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	ns := "popsim-1-budget"
	pre := "{" + ns + ":10/1s:g0}"
	dead := []string{pre + ":b0:e7", pre + ":b5:e8", pre + ":hz:17", pre + ":hz:17:n"} // with end (2·8+4)·w + slack
	live := []string{pre + ":b0:e9", pre + ":hz:18", pre + ":seq:1", "{popsim-2-budget:10/1s:g0}:b0:e7", ns + ":{id1}:s:10/1s"}
	for _, k := range append(slices.Clone(dead), live...) {
		require.NoError(t, rdb.Set(ctx, k, "1", 0).Err())
	}
	c := runClock{end: (2*8+4)*1000 + 1, window: 1000, slack: 1}
	n, err := expireBudgetKeys(ctx, rdb, ns, c)
	require.NoError(t, err)
	assert.EqualValues(t, len(dead), n, "keys deleted")
	left, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	assert.ElementsMatch(t, live, left, "keys left")
}

// TestRunClockAgreesWithScript: the expiry runClock assumes for a bucket
// hash is the one the budget script sets. A budget Machine (default
// expiry slack) decides a request at Redis at a known virtual now; the
// script sets the hash's TTL relative to that now, so its expiry by the
// run's clock is now + (PEXPIRETIME − Redis' time when the script ran),
// bracketed by Redis' TIME read before and after the call. runClock must
// call the hash expired at the bracket's late end and live before its
// early end.
func TestRunClockAgreesWithScript(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const w = 1000
	m, err := budget.NewMachine(budget.Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, w*time.Millisecond), PoPs: 2, FreeCredit: -1})
	require.NoError(t, err)
	x := int64(1_700_000_001) // an odd window: the item's windows span three epochs
	now := x*w + 100
	_, c := m.Request(now, "k", 1)
	require.NotNil(t, c, "no free credit: the request asks Redis")
	before, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	_, err = budget.Exec(ctx, rdb, m, c, now)
	require.NoError(t, err)
	after, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	key := m.BucketKey(c.Items[0].Bucket, x)
	at, err := rdb.Do(ctx, "PEXPIRETIME", key).Int64()
	require.NoError(t, err)
	require.Positive(t, at, "%s has an expiry", key)
	early, late := now+at-after.UnixMilli(), now+at-before.UnixMilli() // the script's expiry by the run's clock lies within
	rc := runClock{window: w, slack: budget.DefaultExpirySlack.Milliseconds()}
	rc.end = late
	assert.True(t, rc.expired(key), "%s: expired by the run's clock at %d (the script's expiry in [%d, %d])", key, late, early, late)
	rc.end = early - 1
	assert.False(t, rc.expired(key), "%s: live by the run's clock at %d (the script's expiry in [%d, %d])", key, early-1, early, late)
}

// TestRunClockHotSetAfterScript: runClock never deletes a hot set (or its
// order counter) the budget script still keeps. A request of 8 units of a
// limit of 10 (one from the PoP's free slot) leaves its identity busy with
// a free slot unclaimed, so the script names it hot and sets the hot set's TTL
// from its now, so its expiry by the run's clock is bracketed as in
// TestRunClockAgreesWithScript. runClock must call both keys live before
// the bracket's early end and expired at its bound, (x+3)·window + slack,
// which must not come before the bracket's late end. Caught mutation: a
// bound one window earlier ((x+2)·window + slack deletes the set 100 ms
// before the script's expiry).
func TestRunClockHotSetAfterScript(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const w = 1000
	m, err := budget.NewMachine(budget.Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, w*time.Millisecond), PoPs: 2, FreeCredit: 1})
	require.NoError(t, err)
	x := int64(1_700_000_000)
	now := x*w + 100
	_, c := m.Request(now, "k", 8)
	require.NotNil(t, c, "8 units are more than the free credit: the request asks Redis")
	before, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	_, err = budget.Exec(ctx, rdb, m, c, now)
	require.NoError(t, err)
	after, err := rdb.Time(ctx).Result()
	require.NoError(t, err)
	hot, err := rdb.Keys(ctx, "*:hz:*").Result()
	require.NoError(t, err)
	require.Len(t, hot, 2, "the hot set of window %d and its counter", x)
	rc := runClock{window: w, slack: budget.DefaultExpirySlack.Milliseconds()}
	for _, key := range hot {
		at, err := rdb.Do(ctx, "PEXPIRETIME", key).Int64()
		require.NoError(t, err)
		require.Positive(t, at, "%s has an expiry", key)
		early, late := now+at-after.UnixMilli(), now+at-before.UnixMilli()
		bound := (x+3)*w + rc.slack
		assert.GreaterOrEqual(t, bound, late, "%s: runClock's bound is not before the script's expiry", key)
		rc.end = early - 1
		assert.False(t, rc.expired(key), "%s: live by the run's clock at %d (the script's expiry in [%d, %d])", key, early-1, early, late)
		rc.end = bound
		assert.True(t, rc.expired(key), "%s: expired by the run's clock at its bound %d", key, bound)
	}
}

// TestBudgetBucketsFlag: -budget-buckets sets the identity buckets of
// every budget Machine (0: about 100 identities of the trace each, at
// least 16), reported in the budget Stats; fewer buckets hold the same
// fields in fewer hashes (Redis' fields per hash grows as they shrink).
func TestBudgetBucketsFlag(t *testing.T) {
	_, p := redistest.Client(t)
	fields := map[string]float64{}
	for _, tc := range []struct {
		flag string
		want float64
	}{{"0", 16}, {"4", 4}, {"64", 64}} {
		_, res, st := budgetRun(t, p.Addr, "10s", "-budget-buckets "+tc.flag, "-budget-buckets", tc.flag)
		assert.Equal(t, tc.want, st["buckets"], "-budget-buckets %s: the Machines' buckets", tc.flag)
		mem, _ := res["memory"].(map[string]any)
		red, _ := mem["redis"].(map[string]any)
		require.NotNil(t, red, "Redis memory measured in %v", res)
		fields[tc.flag], _ = red["fields_per_hash"].(float64)
	}
	assert.Greater(t, fields["4"], fields["64"], "4 buckets: more fields per hash than 64")
}
