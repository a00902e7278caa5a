package budget

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hotBatch has m send a Sync batch at now (a full entry asking a top-up)
// and finishes it with Redis naming hot; it returns the batch.
func hotBatch(t *testing.T, m *Machine, now int64, hot ...string) *Call {
	t.Helper()
	m.Request(now-20, "seen", 1)
	if _, c := m.Request(now-10, "seen", 1); c != nil {
		m.Complete(now-5, c, &Result{Now: now - 5, Window: m.window(now - 5), Items: []ItemResult{{Allowed: 1, CW: 2, Headroom: 8}}}, nil)
	}
	calls := m.Tick(now)
	require.Len(t, calls, 1, "one batch")
	c := calls[0]
	r := &Result{Now: now, Window: m.window(now), Items: make([]ItemResult, len(c.Items))}
	for _, k := range hot {
		r.Hot = append(r.Hot, HotKey{Key: k, Bucket: m.bucket(k)})
	}
	m.Finish(c, r, nil)
	return c
}

// TestRenouncedRecord: an identity Redis names hot that this PoP holds
// nothing of is a renounced record, not a full entry; the next Sync gives
// up its slots of the previous, current and next windows once, and while
// the record covers a window the PoP spends no free credit of it: a
// request there is decided on a full entry that keeps the record's claims
// (given up, and sent). Two windows on the record is gone and free credit
// serves the identity again. Caught mutations: the light tier ignoring
// records (the request is admitted free in a slot given up), a full entry
// made without the record's windows (free credit again, or its slots
// claimed a second time), claims sent at every Tick, records kept past
// their windows (Len is not back to the full entry alone).
func TestRenouncedRecord(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	hotBatch(t, m, w0+100, "cold")
	assert.NotContains(t, m.view, "cold", "no full entry for an identity named hot and never seen here")
	assert.Equal(t, 2, m.Len(), "the record is in the view beside the full entry of the batch's identity")
	calls := m.Tick(w0 + 200)
	require.Len(t, calls, 1)
	var claims []int64
	for _, it := range calls[0].Items {
		if it.Key == "cold" {
			claims = it.Claims
			assert.Zero(t, it.Want, "a record asks nothing")
			assert.Empty(t, it.Ops, "and reports nothing")
		}
	}
	assert.Equal(t, []int64{x - 1, x, x + 1}, claims, "its slots of the windows a free unit could weigh in, given up")
	m.Finish(calls[0], &Result{Now: w0 + 200, Window: x, Items: make([]ItemResult, len(calls[0].Items))}, nil)
	for _, c := range m.Tick(w0 + 300) {
		for _, it := range c.Items {
			assert.NotEqual(t, "cold", it.Key, "claims sent once")
		}
		m.Finish(c, &Result{Now: w0 + 300, Window: x, Items: make([]ItemResult, len(c.Items))}, nil)
	}

	d, c := m.Request(w0+400, "cold", 1)
	require.NotNil(t, c, "its slot of x is given up: Redis decides")
	assert.NotEqual(t, SrcFree, d.Source)
	require.Contains(t, m.view, "cold", "decided on a full entry")
	assert.Equal(t, []int64{x + 2}, c.Items[0].Claims, "the slots through x+1 were given up already; the decision Call gives up x+2's")
	assert.Equal(t, x+2, m.view["cold"].claimed)
	assert.Equal(t, 2, m.Len(), "the record became the full entry")
	m.Complete(w0+450, c, &Result{Now: w0 + 450, Window: x, Items: []ItemResult{{Allowed: 1, CW: 1, Headroom: 9}}}, nil)

	// Named in x, a second identity's record covers x and x+1, not x+2.
	hotBatch(t, m, w0+500, "cold2")
	m.Tick(w0 + testWindow + 100)
	_, c = m.Request(w0+testWindow+200, "cold2", 1)
	assert.NotNil(t, c, "window x+1: given up, Redis decides")
	m.Tick(w0 + 2*testWindow + 100)
	assert.Zero(t, m.renouncedLen(), "window x+2: no record left")
	d, c = m.Request(w0+2*testWindow+200, "cold3", 1)
	assert.Nil(t, c)
	assert.Equal(t, SrcFree, d.Source, "an identity no record covers: free credit")
}

// TestRenouncedWaitsForItsGroup: a record's claims wait while its group's
// batch is out (a Tick may plan none into it: the batch sent again would
// drop them), go with the next Tick after it, and are sent again with
// their batch when its reply is lost; named hot again in the next window,
// the record gives up only the window after that. Caught mutations:
// claims planned into a group whose batch is out (never sent), a renaming
// that claims its windows again.
func TestRenouncedWaitsForItsGroup(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	hotBatch(t, m, w0+100, "cold")
	claimsOf := func(cs []*Call) []int64 {
		for _, c := range cs {
			for _, it := range c.Items {
				if it.Key == "cold" {
					return it.Claims
				}
			}
		}
		return nil
	}
	out := &Call{Group: 0, Seq: 99, Now: w0 + 150}
	m.groups[0].inflight = out // a batch of the group is out
	assert.Nil(t, claimsOf(m.Tick(w0+200)), "its group's batch is out: the claims wait")
	m.groups[0].inflight = nil
	first := m.Tick(w0 + 300)
	require.Equal(t, []int64{x - 1, x, x + 1}, claimsOf(first), "the next Tick sends them")
	m.Finish(first[0], nil, assert.AnError) // the reply is lost
	again := m.Tick(w0 + 400)
	require.Len(t, again, 1)
	assert.Same(t, first[0], again[0], "the batch, claims and all, sent again")
	m.Finish(again[0], &Result{Now: w0 + 400, Window: x, Items: make([]ItemResult, len(again[0].Items))}, nil)

	// Named again in x+1: only x+2 is left to give up.
	hotBatch(t, m, w0+testWindow+100, "cold")
	assert.Equal(t, []int64{x + 2}, claimsOf(m.Tick(w0+testWindow+200)), "x+2 alone")
}

// TestRenouncedNamings: a naming Redis made in a window the records have
// moved past (a reply slower than a later one) files the record with the
// windows it gives up, a naming of the same window again changes nothing,
// and a naming older than a live record's leaves it as it is. Caught
// mutations: namings behind the newest dropped (the identity's slot of
// x+1 spent free), a second naming queuing its claims twice, an older
// naming shortening a record.
func TestRenouncedNamings(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	m.rollRenounced(x + 1)
	m.renounce(HotKey{Key: "late", Bucket: m.bucket("late")}, x) // named in x, heard after x+1's
	through, _, ok := m.renouncedThrough("late", x+1)
	require.True(t, ok, "filed: it covers x+1")
	assert.Equal(t, x+1, through)
	m.Request(w0+testWindow+50, "other", 1) // the light tier in x+1
	d, c := m.Request(w0+testWindow+100, "late", 1)
	assert.NotNil(t, c, "x+1's slot is given up: Redis decides")
	assert.NotEqual(t, SrcFree, d.Source)

	m.renounce(HotKey{Key: "twice", Bucket: m.bucket("twice")}, x+1)
	m.renounce(HotKey{Key: "twice", Bucket: m.bucket("twice")}, x+1)
	m.renounce(HotKey{Key: "twice", Bucket: m.bucket("twice")}, x)
	n := 0
	for _, h := range m.ren.toClaim {
		if h.Key == "twice" {
			n++
		}
	}
	assert.Equal(t, 1, n, "its claims queued once")
	through, _, ok = m.renouncedThrough("twice", x+2)
	assert.True(t, ok)
	assert.Equal(t, x+2, through, "the older naming leaves it given up through x+2")
}

// TestPeekWithRenouncedRecord: a peek of an identity whose slots this PoP
// gave up counts none of them as its own to spend: with Redis' headroom
// at 0 a unit would be denied, where a PoP holding its slots would add
// this window's and the next. Caught mutation: the peek ignoring records
// (allowed, room 2).
func TestPeekWithRenouncedRecord(t *testing.T) {
	for _, named := range []bool{false, true} {
		m := newTestMachine(t, nil)
		x := int64(w0 / testWindow)
		if named {
			m.rollRenounced(x)
			m.renounce(HotKey{Key: "k", Bucket: m.bucket("k")}, x)
		}
		_, c := m.Peek(w0+100, "k")
		require.NotNil(t, c)
		d := m.PeekDone(w0+150, c, &Result{Now: w0 + 120, Window: x, Items: []ItemResult{{Headroom: 0, CW: 5, Retry: 500}}}, nil)
		assert.Equal(t, !named, d.Allowed, "named hot %v: its own slots count only when it holds them", named)
	}
}

// TestRenouncedRecordCarried: a record Redis names hot again in each later
// window is extended in the map it was filed in, not moved to a newer one
// (a move leaves a deleted slot in the older map, which a Go map never
// gives back), and when that map leaves the live ones the record is filed
// again (carried, at the next Tick) with what it held: it still covers the windows it reaches, so a request there
// gets no free credit, and the claims it sent stay sent. Caught mutations:
// a record moved at each naming (its map follows the naming), no carry
// when its map leaves (x+3's slot not given up: no item, free credit),
// Ticks that carry nothing (it waits), a carry that loses how far its
// claims were sent (x+2 claimed again).
func TestRenouncedRecordCarried(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	h := HotKey{Key: "hot", Bucket: m.bucket("hot")}
	tick := func(now int64) []Item {
		var items []Item
		for _, c := range m.Tick(now) {
			for _, it := range c.Items {
				if it.Key == h.Key {
					items = append(items, it)
				}
			}
			m.Finish(c, &Result{Now: now, Window: m.window(now), Items: make([]ItemResult, len(c.Items))}, nil)
		}
		return items
	}
	tick(w0 + 100)
	m.renounce(h, x)
	require.Contains(t, m.ren.recs[0], h.Key, "filed")
	for k := int64(1); k <= 2; k++ {
		require.Len(t, tick(w0+k*testWindow+100), 1, "window x+%d: the last naming's claims go", k)
		m.renounce(h, x+k)
		_, through, sent, _, ok := m.ren.find(h.Key)
		require.True(t, ok)
		assert.Equal(t, x+k+1, through, "given up through x+%d", k+1)
		assert.Equal(t, x+k, sent, "claims through x+%d sent", k)
		assert.Contains(t, m.ren.recs[k], h.Key, "extended in the map it was filed in, %d rolls on", k)
	}
	items := tick(w0 + 3*testWindow + 100) // the map it was filed in is dropped
	require.Len(t, items, 1, "carried: its claim of x+3 goes")
	assert.Equal(t, []int64{x + 3}, items[0].Claims, "x+2's claim was sent before the carry")
	through, sent, ok := m.renouncedThrough(h.Key, x+3)
	require.True(t, ok, "x+3 is still given up")
	_, _, _, waiting, _ := m.ren.find(h.Key)
	assert.False(t, waiting, "carried into a live map by the Tick")
	assert.Equal(t, []int64{x + 3, x + 3}, []int64{through, sent})
	d, c := m.Request(w0+3*testWindow+200, h.Key, 1)
	assert.NotNil(t, c, "its slot of x+3 is given up: Redis decides")
	assert.NotEqual(t, SrcFree, d.Source)
}

// TestRecordPacking: a renounced record's two windows round-trip through
// packRecord for negative and large windows, read back from any base up
// to three windows past through, windows past ±2⁶¹ and near the ends of
// int64 included; a sent more than three windows behind is stored three
// behind, and a sent past through as through.
func TestRecordPacking(t *testing.T) {
	for _, through := range []int64{-1 << 60, -5, -1, 0, 1, 7, 1 << 40, 1<<60 + 3, 1<<61 + 1, 1<<62 + 5, -(1 << 61) - 1, -(1 << 62), math.MinInt64 + 3, math.MaxInt64 - 3} {
		for k := int64(0); k <= 3; k++ {
			base := through + k
			for d := int64(0); d <= 3; d++ {
				gotT, gotS := unpackRecord(packRecord(through, through-d), base)
				assert.Equal(t, []int64{through, through - d}, []int64{gotT, gotS}, "through %d, sent %d, base %d", through, through-d, base)
			}
		}
		_, s := unpackRecord(packRecord(through, math.MinInt64), through+1)
		assert.Equal(t, through-3, s, "a sent long before is three behind")
		_, s = unpackRecord(packRecord(through, through+2), through)
		assert.Equal(t, through, s, "a sent past through is through")
	}
}

// TestCarrySpreadOverTicks: the records a map held when it left the live
// maps are carried a bounded number at a time (carryMin at the defaults
// here), found by lookups while they wait, and those whose windows ended
// are dropped as they come; a waiting record named again moves to a live
// map at once (a waiting map is dropped three windows after it left,
// whatever its records reach). Caught mutations: every record carried when
// the window moves on (a pause as long as the records are many), waiting
// records not looked up (a slot given up spent free), dead records carried
// (Len over), a waiting record extended where it waits, a count that
// starts again at each waiting map.
func TestCarrySpreadOverTicks(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	const live, dead = 3000, 500
	key := func(i int) string { return fmt.Sprint("k", i) }
	m.rollRenounced(x)
	for i := range live + dead {
		m.ren.file(key(i), x+1, x+1)
	}
	m.rollRenounced(x + 2)
	for i := range live { // named in x+1 and x+2: extended where they are
		m.ren.recs[2][key(i)] = packRecord(x+3, x+3)
	}
	m.rollRenounced(x + 3)
	require.Len(t, m.ren.carry, 1, "the map filed in x waits to be carried")
	assert.Empty(t, m.ren.recs[1], "nothing carried when the window moved on")
	for i := range live {
		through, _, ok := m.renouncedThrough(key(i), x+3)
		require.True(t, ok, "%s covers x+3 while it waits", key(i))
		require.Equal(t, x+3, through)
	}
	m.renounce(HotKey{Key: key(0), Bucket: m.bucket(key(0))}, x+3)
	assert.Contains(t, m.ren.recs[0], key(0), "named again while it waits: filed through x+4 in a live map")
	_, through, _, waiting, _ := m.ren.find(key(0))
	assert.Equal(t, []any{x + 4, false}, []any{through, waiting})

	held := func() int {
		n := 0
		for _, c := range m.ren.carry {
			n += len(c.recs)
		}
		return n
	}
	for carried := 0; len(m.ren.carry) > 0; {
		before := held()
		m.carryRecords()
		assert.LessOrEqual(t, before-held(), carryMin, "at most carryMin records a Tick")
		carried += before - held()
		require.LessOrEqual(t, carried, live+dead, "ends")
	}
	assert.Len(t, m.ren.recs[1], live-1, "the extended records are live, through x+3")
	assert.Equal(t, live, m.renouncedLen(), "the dead are dropped")

	// two maps waiting: a Tick carries at most the oldest's count in all
	for j := range 2 {
		recs := map[string]int64{}
		for i := range 800 {
			recs[fmt.Sprint("w", j, "-", i)] = packRecord(x+3, x+3)
		}
		m.ren.carry = append(m.ren.carry, carrying{recs: recs, x: x + 3, per: carryMin})
	}
	m.carryRecords()
	assert.Equal(t, 1600-carryMin, held(), "carryMin carried over both maps")
}
