package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgetReportsStatsAndViews: the budget mode on a real redis-server
// reports its Machines' Stats summed over the PoPs (every request decided
// by one source, the round trips the result counts, calls and items per
// decision their quotients) and the Go heap its live Machines held per
// view entry, in a sane range for an entry (sync/budget's benchmark
// measures about 283 bytes), beside the article's references.
func TestBudgetReportsStatsAndViews(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "spread-attack")
	e.RedisAddr = p.Addr
	r, err := Run(context.Background(), e, "budget")
	require.NoError(t, err)
	b := r.Budget
	require.NotNil(t, b, "budget mode: no Stats in %+v", r)
	var decided uint64
	for _, n := range b.BySource {
		decided += n
	}
	assert.EqualValues(t, r.Decisions, decided, "decisions by source %v, want every one of the trace's %d requests once", b.BySource, r.Decisions)
	assert.Len(t, b.BySource, 6, "sources %v, want all six named, zero or not", b.BySource)
	assert.Positive(t, b.BySource["free"]+b.BySource["grant"], "sources %v: want some admitted without a round trip", b.BySource)
	assert.EqualValues(t, r.RedisRoundTrips, b.RoundTrips, "Stats' round trips against the result's")
	assert.Equal(t, 4, b.Machines, "Machines summed over, want one per PoP")
	assert.False(t, b.Calls == 0 || b.Items < b.Calls/2, "calls %d, items %d: want calls made and items in most", b.Calls, b.Items)
	assert.InDelta(t, float64(b.Items)/float64(r.Decisions), b.ItemsPerDecision, 1e-12, "items per decision = items / decisions")
	assert.InDelta(t, float64(b.Calls)/float64(r.Decisions), b.CallsPerDecision, 1e-12, "calls per decision = calls / decisions")

	assertFalseDeniesBySource(t, r, false)

	m := r.Memory
	require.False(t, m == nil || m.View == nil || m.Redis != nil || m.ArticleBytes != 96 || m.CloudflareBytes != 24,
		"memory %+v, want a view, no Redis part (the command adds it), 96 and 24", m)
	v := m.View
	ids := e.identitiesSeen()
	assert.False(t, v.Entries <= 0 || v.Entries > 4*ids || v.EntriesPerPoP != float64(v.Entries)/4,
		"view %+v, want entries on 4 PoPs of at most the %d identities each", v, ids)
	assert.False(t, v.BytesPerEntry < 100 || v.BytesPerEntry > 5000 || v.BytesPerEntry != float64(v.HeapBytes)/float64(v.Entries),
		"view %+v, want heap / entries in 100..5000 bytes", v)
	assert.False(t, v.Identities != ids || v.BytesPerIdentity != float64(v.HeapBytes)/float64(ids),
		"view %+v, want the heap per each of the %d identities of the trace", v, ids)
}

// TestBudgetStatsCountCrashedMachines: a crash adds a Machine to the sums,
// whose round trips still equal the result's.
func TestBudgetStatsCountCrashedMachines(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "mixed")
	e.RedisAddr = p.Addr
	e.Faults.Crashes = []netmodel.Crash{{PoP: 1, At: e.Trace.Duration / 2}}
	r, err := Run(context.Background(), e, "budget")
	require.NoError(t, err)
	require.NotNil(t, r.Budget, "budget mode: no Stats")
	assert.Equal(t, 5, r.Budget.Machines, "4 PoPs and one crash: want 5 Machines summed")
	assert.EqualValues(t, r.RedisRoundTrips, r.Budget.RoundTrips, "Stats' round trips against the result's")
	var decided uint64
	for _, n := range r.Budget.BySource {
		decided += n
	}
	assert.LessOrEqual(t, decided, uint64(r.Decisions), "decided %v: at most the trace's %d (a crashed Machine's open requests are counted nowhere)", r.Budget.BySource, r.Decisions)
	assertFalseDeniesBySource(t, r, true)
}

// assertFalseDeniesBySource checks that every class's false denies and
// false allows are split by source: each split sums to the class's
// FalseDenies or FalseAllows and names only the Machine's sources ("crash"
// too among the denies when crashed, and then some; never among the
// allows, since a crash admits nothing it leaves unanswered).
func assertFalseDeniesBySource(t *testing.T, r Result, crashed bool) {
	t.Helper()
	known := map[string]bool{}
	for _, n := range []string{"deny-cache", "full", "grant", "free", "fallback", "redis"} {
		known[n] = true
	}
	var denied, allowed, byCrash int64
	for _, c := range r.Classes {
		require.NotNil(t, c.FalseDeniesBySource, "class %s: no split of false denies", c.Class)
		require.NotNil(t, c.FalseAllowsBySource, "class %s: no split of false allows", c.Class)
		var sum int64
		for s, k := range c.FalseDeniesBySource {
			assert.True(t, known[s] || (crashed && s == "crash"), "class %s: false denies' source %q", c.Class, s)
			sum += k
		}
		assert.Equal(t, c.FalseDenies, sum, "class %s: split %v", c.Class, c.FalseDeniesBySource)
		sum = 0
		for s, k := range c.FalseAllowsBySource {
			assert.True(t, known[s], "class %s: false allows' source %q", c.Class, s)
			sum += k
		}
		assert.Equal(t, c.FalseAllows, sum, "class %s: split %v", c.Class, c.FalseAllowsBySource)
		denied += c.FalseDenies
		allowed += c.FalseAllows
		byCrash += c.FalseDeniesBySource["crash"]
	}
	assert.Positive(t, denied, "no false denies: the split is not exercised")
	assert.Positive(t, allowed, "no false allows: the split is not exercised")
	if crashed {
		assert.Positive(t, byCrash, "a crash left no request unanswered that the exact log admits")
	}
}

// TestBudgetPipelineChangesNothing: running the Calls that reach Redis
// within the shortest one-way delay in one pipeline decides every request
// as running each Call alone at its arrival does, faults included (an
// outage refuses some, a partition loses some): the same admissions,
// errors, round trips and worst over-admission. A pipeline that ran a
// Call after an event its reply must precede, or out of arrival order,
// changes the figures here.
func TestBudgetPipelineChangesNothing(t *testing.T) {
	rdb, p := redistest.Client(t)
	run := func(oneAtATime bool) Result {
		t.Helper()
		require.NoError(t, rdb.FlushAll(context.Background()).Err())
		e := testEnv(t, "mixed")
		e.RedisAddr = p.Addr
		third := e.Trace.Duration / 3
		e.Faults = netmodel.Faults{RedisOutage: netmodel.Span{Start: third, Dur: 700 * time.Millisecond},
			Partition: netmodel.PoPSpan{PoP: 1, Span: netmodel.Span{Start: 2 * third, Dur: 500 * time.Millisecond}}}
		budgetOneCallAtATime = oneAtATime
		defer func() { budgetOneCallAtATime = false }()
		r, err := Run(context.Background(), e, "budget")
		require.NoError(t, err)
		return r
	}
	alone, piped := run(true), run(false)
	require.Positive(t, alone.RedisRoundTrips, "the run asked Redis")
	assert.Equal(t, alone.Allowed, piped.Allowed, "units admitted")
	assert.Equal(t, alone.FalseAllows, piped.FalseAllows, "false allows")
	assert.Equal(t, alone.FalseDenies, piped.FalseDenies, "false denies")
	assert.Equal(t, alone.RedisRoundTrips, piped.RedisRoundTrips, "round trips")
	assert.Equal(t, alone.MaxOveradmission, piped.MaxOveradmission, "worst over-admission")
	assert.Equal(t, alone.AddedLatencyP99Ms, piped.AddedLatencyP99Ms, "p99 added latency")
}
