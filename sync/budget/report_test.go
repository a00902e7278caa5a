package budget

import (
	"context"
	"errors"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDecisionReportAppliedOnce: a decision Call carrying a report (a free
// unit's op, the next window's slot given up) is applied once however
// often it reaches Redis: a duplicated send is recognised by its guard
// ('dseq'), and after a lost reply Tick sends the report again under the
// same number, which Redis recognises too; the next such Call has the next
// number and is applied. Mutations it catches: a decision Call with no
// sequence number (the duplicate counts the free unit and the claim
// twice: C 3, K 2); a redo with a new number (applied again); a redo
// never sent (the guard stays taken: the next Call carries no report).
func TestDecisionReportAppliedOnce(t *testing.T) {
	rdb, _ := redistest.Client(t)
	m := testMachine(t, 2, 100)
	w := int64(91)
	now := w*testWindow + 10
	takeLease(t, rdb, m, now)
	m.Request(now, "d", 1) // free credit
	_, c := m.Request(now+1, "d", 1)
	require.NotNil(t, c)
	require.Equal(t, uint64(1), c.Seq, "the Call carries the report under its guard")
	require.Equal(t, []Op{{X: w, GW: GWFree, U: 1}}, c.Items[0].Ops)
	require.Contains(t, c.Items[0].Claims, w+1)
	first, err := Exec(context.Background(), rdb, m, c, now+1)
	require.NoError(t, err)
	assert.False(t, first.Retried)
	assert.Equal(t, int64(1), first.Items[0].Allowed)
	again, err := Exec(context.Background(), rdb, m, c, now+2)
	require.NoError(t, err)
	assert.True(t, again.Retried, "the duplicate is recognised")
	after := readState(t, rdb, m, "d", w)
	assert.Equal(t, int64(2), after.C, "the free unit and the decided one, once each")
	assert.Equal(t, int64(1), after.K, "slot w claimed once, by the free unit's op")
	assert.Equal(t, int64(1), readState(t, rdb, m, "d", w+1).K, "slot w+1 given up once")

	// The reply is lost: Redis applied the Call, this PoP cannot know.
	d := m.Complete(now+300, c, nil, errors.New("reply lost"))
	assert.Equal(t, SrcFallback, d.Source, "the request is decided on the view")
	calls := m.Tick(now + 310)
	var redo *Call
	for _, k := range calls {
		if k.redo {
			redo = k
		}
	}
	require.NotNil(t, redo, "Tick sends the report again")
	assert.Equal(t, c.Seq, redo.Seq, "under the same number")
	assert.Equal(t, c.Items[0].Ops, redo.Items[0].Ops)
	assert.Zero(t, redo.Items[0].N, "deciding nothing")
	// only the redo goes out (the batch of the fallback's unit stays
	// unsent, so the state shows what the redo did)
	res, err := Exec(context.Background(), rdb, m, redo, now+320)
	require.NoError(t, err)
	assert.True(t, res.Retried, "Redis recognises the report it applied")
	m.Finish(redo, res, nil)
	assert.Equal(t, after, readState(t, rdb, m, "d", w), "the redo changed nothing")
	assert.Equal(t, int64(1), readState(t, rdb, m, "d", w+1).K)
	m.Request(now+400, "e", 1) // free credit
	_, c2 := m.Request(now+401, "e", 1)
	require.NotNil(t, c2)
	assert.Equal(t, uint64(2), c2.Seq, "the guard is free again: the next Call reports, with the next number")
	r2, err := Exec(context.Background(), rdb, m, c2, now+401)
	require.NoError(t, err)
	assert.False(t, r2.Retried, "and is applied")
	assert.Equal(t, int64(2), readState(t, rdb, m, "e", w).C)
}

// TestResetKeepsBudget: Reset forgets C of the identity's windows but
// keeps the budget PoPs hold (G, and K's claimed slots), so no PoP's
// grant turns into units Redis no longer accounts for; this PoP's
// unreported spends go back as returns (G shrinks by them, C is not
// raised) and, once the Reset is applied (ResetDone), its view forgets
// its counts and Redis' word, not before. Mutations it catches: a Reset
// that deletes the field (G lost: B's grant is free budget twice), one
// that sends the spends as spends (C 2 after the Reset), one that keeps
// the deny cache, one that forgets the view before Redis applied it.
func TestResetKeepsBudget(t *testing.T) {
	rdb, _ := redistest.Client(t)
	a, b := testMachine(t, 2, 100), testMachine(t, 2, 100)
	b.cfg.Incarnation = 8
	w := int64(55)
	now := w*testWindow + 10
	run := func(m *Machine, c *Call) *Result {
		t.Helper()
		r, err := Exec(context.Background(), rdb, m, c, now)
		require.NoError(t, err)
		return r
	}
	takeLease(t, rdb, a, now-200)
	takeLease(t, rdb, b, now-200)
	// B holds a grant (seen since the window before: settled, its Call
	// asks a top-up).
	b.Request(now-200, "r", 1)
	b.Request(now, "r", 1)
	_, cb := b.Request(now, "r", 1)
	rb := run(b, cb)
	b.Complete(now, cb, rb, nil)
	require.Positive(t, rb.Items[0].Grant, "B's Call is granted a top-up")
	// A: a decided request with a grant, two units spent from it unreported.
	a.Request(now-200, "r", 1)
	a.Request(now, "r", 1)
	_, ca := a.Request(now, "r", 5)
	ra := run(a, ca)
	a.Complete(now, ca, ra, nil)
	require.GreaterOrEqual(t, ra.Items[0].Grant, int64(2), "A's Call is granted a top-up")
	for range 2 {
		d, c := a.Request(now, "r", 1)
		require.Nil(t, c)
		require.Equal(t, SrcGrant, d.Source)
	}
	before := readState(t, rdb, a, "r", w)
	require.Positive(t, before.C)
	a.view["r"].denyUntil = now + 1000
	rc := a.Reset(now, "r")
	assert.Equal(t, "rseq", rc.guard, "a Reset has its own guard")
	e := a.view["r"]
	assert.Empty(t, e.pending(), "A's spends went with the Reset")
	assert.Equal(t, int64(now+1000), e.denyUntil, "the view is forgotten only once Redis applied the Reset")
	assert.Positive(t, e.own.Cur, "A's own counts too")
	run(a, rc)
	a.ResetDone(rc, nil)
	got := readState(t, rdb, a, "r", w)
	assert.Zero(t, got.C, "Redis' count is forgotten")
	assert.Equal(t, before.G-2, got.G, "the grants stay accounted, less A's two spent units, returned")
	assert.Equal(t, before.K, got.K, "claimed slots stay claimed")
	assert.Empty(t, e.pending(), "A's spends went with the Reset")
	assert.Zero(t, e.denyUntil, "the deny cache is forgotten")
	assert.Zero(t, e.own.Cur, "A's own counts are forgotten")
	d := a.Describe(now, "r", 1, Decision{Allowed: true, Source: SrcGrant})
	assert.Equal(t, int64(100), d.Remaining, "nothing counted: the whole limit remains")
}

// TestPeekWritesNothing: a peek reads Redis' word on an identity (its
// headroom, its count) and writes nothing: no field, no hot set entry,
// even for an identity near its limit; its Remaining is core's on the
// counts. A mutation that lets a peek item update the hot set fails here.
func TestPeekWritesNothing(t *testing.T) {
	rdb, _ := redistest.Client(t)
	m := testMachine(t, 2, 20)
	w := int64(33)
	now := w*testWindow + 10
	takeLease(t, rdb, m, now)
	writeState(t, rdb, m, "p", w, cgk{C: 17})
	keys := func() []string {
		k, err := rdb.Keys(context.Background(), "*").Result()
		require.NoError(t, err)
		return k
	}
	before := keys()
	d0, c := m.Peek(now, "p")
	require.NotNil(t, c, "nothing known here: the peek asks Redis")
	assert.Zero(t, d0)
	r, err := Exec(context.Background(), rdb, m, c, now)
	require.NoError(t, err)
	d := m.PeekDone(now, c, r, nil)
	assert.ElementsMatch(t, before, keys(), "the peek wrote no key")
	assert.Equal(t, cgk{C: 17}, readState(t, rdb, m, "p", w), "nor the field")
	assert.Equal(t, int64(3), d.Remaining, "20 less the 17 Redis counted")
	assert.True(t, d.Allowed, "a unit fits")
	assert.Zero(t, m.Len(), "a peek makes no view entry")
}

// TestScriptReportWindow: Redis applies the numbered reports of decision
// Calls at most once each, in any order within a window of 32 below the
// highest number applied: 5, 3, 4 are each applied; 3 again is refused;
// 40 moves the window, and 5 (35 below it) is then refused as too old,
// while 9 (31 below) is applied. Mutations it catches: a high-water guard
// (3 and 4 refused after 5), no mask (3 applied twice), no window bound
// (5 applied again after 40).
func TestScriptReportWindow(t *testing.T) {
	rdb, _ := redistest.Client(t)
	m := testMachine(t, 2, 1000)
	w := int64(17)
	now := w*testWindow + 10
	send := func(seq uint64) bool {
		t.Helper()
		c := &Call{Group: m.group(m.bucket("q")), Seq: seq, Now: now, hotWin: -1, guard: "dseq",
			Items: []Item{{Key: "q", Bucket: m.bucket("q"), Ops: []Op{{X: w, GW: GWFallback, U: 1}}}}}
		r, err := Exec(context.Background(), rdb, m, c, now)
		require.NoError(t, err)
		return !r.Retried
	}
	for _, tc := range []struct {
		seq     uint64
		applied bool
	}{{5, true}, {3, true}, {4, true}, {3, false}, {5, false}, {40, true}, {5, false}, {9, true}, {9, false}} {
		assert.Equal(t, tc.applied, send(tc.seq), "report %d", tc.seq)
	}
	assert.Equal(t, int64(5), readState(t, rdb, m, "q", w).C, "five reports of one unit applied")
}
