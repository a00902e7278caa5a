package budget

import (
	"testing"

	"github.com/edgelimit/edgelimit/core"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForgottenWindows: a light record's window, dropped when the tier
// rolled two windows on, stays spent for a request stamped late in it,
// and no claim is sent for it; an identity new in the newest window still
// gives up its slot of the window before. Caught mutations: rollLight not
// forgetting (the late request is admitted free a second time in window
// x), a new full entry not starting from forgot (the same), one whose
// claims are not (its decision Call gives up slot x, which the dropped
// record spent unreported), forgot a window later (the new identity's
// claim of x+1 is missing).
func TestForgottenWindows(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	d, c := m.Request(w0+100, "k", 1)
	require.Nil(t, c)
	require.Equal(t, SrcFree, d.Source, "k's slot of x, spent in a light record")
	m.Request(w0+2*testWindow+100, "other", 1) // a request in x+2 rolls the tier: x's records are dropped
	assert.Equal(t, x, m.forgot)

	d, c = m.Request(w0+200, "k", 1) // stamped late, in x
	require.NotNil(t, c, "x's slot is forgotten: Redis decides")
	assert.NotEqual(t, SrcFree, d.Source)
	for _, y := range c.Items[0].Claims {
		assert.Greater(t, y, x, "no claim of a forgotten window")
	}

	_, c = m.Request(w0+2*testWindow+200, "new", 2)
	require.NotNil(t, c, "2 units are more than the free credit")
	assert.Equal(t, []int64{x + 1, x + 3, x + 4}, c.Items[0].Claims, "the new identity gives up x+1, x+3 and x+4 (x+2's slot pays a unit)")
}

// TestForgottenRecords: a renounced record dropped because a reply's
// window ran ahead of the requests' (a slow call) leaves its windows
// forgotten, so a request stamped in one of them spends no free credit
// in a slot given up; records shifted by a jump of two windows still
// cover what they gave up. Caught mutations: rollRenounced not
// forgetting (the request at x+1 is admitted free in a slot given up),
// two maps of records (the jump of two drops the record while it covers
// x+1).
func TestForgottenRecords(t *testing.T) {
	for _, jump := range []int64{2, 3} {
		m := newTestMachine(t, nil)
		x := int64(w0 / testWindow)
		hotBatch(t, m, w0+100, "cold") // named in x: given up through x+1
		calls := m.Tick(w0 + testWindow + 100)
		require.Len(t, calls, 1, "jump %d", jump)
		at := (x+jump)*testWindow + 5 // the batch ran jump windows after x
		m.Finish(calls[0], &Result{Now: at, Window: x + jump, Items: make([]ItemResult, len(calls[0].Items)),
			Hot: []HotKey{{Key: "other", Bucket: m.bucket("other")}}}, nil)
		d, c := m.Request(w0+testWindow+200, "cold", 1) // stamped in x+1
		assert.NotNil(t, c, "jump %d: x+1's slot was given up: Redis decides", jump)
		assert.NotEqual(t, SrcFree, d.Source, "jump %d", jump)
	}
}

// TestRetiredEntryKeepsItsLastSlot: a full entry forgotten at a Tick of
// window x (idle) after spending its free slot of x−1 leaves that slot
// spent: a request stamped late in x−1 spends no free credit, one in x
// does, and no later claim gives the used slot of x−1 up. Caught
// mutations: retire not filing the record (the late request is admitted
// free a second time in x−1), a record whose claims count as unsent (the
// decision Call in x gives up x−1, freeing the unit it admitted).
func TestRetiredEntryKeepsItsLastSlot(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0/testWindow) + 1
	e := m.entry("k")
	e.claimed, e.usedFree, e.own = x-1, x-1, core.WindowState{Index: x - 2, Cur: 1} // its slot of x−1 spent, nothing else held
	m.Tick(x*testWindow + 100)
	require.NotContains(t, m.view, "k", "idle: forgotten")
	d, c := m.Request((x-1)*testWindow+900, "k", 1) // stamped late, in x−1
	require.NotNil(t, c, "x−1's slot is spent: Redis decides")
	assert.NotEqual(t, SrcFree, d.Source)
	assert.NotContains(t, c.Items[0].Claims, x-1, "the used slot is not given up")

	m2 := newTestMachine(t, nil)
	e = m2.entry("k")
	e.claimed, e.usedFree, e.own = x-1, x-1, core.WindowState{Index: x - 2, Cur: 1}
	m2.Tick(x*testWindow + 100)
	_, c = m2.Request(x*testWindow+200, "k", 2)
	require.NotNil(t, c, "2 units: Redis decides the one the slot of x does not pay")
	assert.NotContains(t, c.Items[0].Claims, x-1, "the used slot is not given up")
	d, c = m2.Request(x*testWindow+300, "j", 1)
	assert.Nil(t, c)
	assert.Equal(t, SrcFree, d.Source, "another identity's slot of x is free")
}

// TestEarlyStampKeepsTheCurrentWindow: a request stamped ahead of the
// PoP's clock (a caller's own time) does not make the window the PoP is
// in forgotten: one window ahead it is decided in the light tier (the
// tier rolls to it, so the window before the current is forgotten, not
// the current), two or more ahead on a full entry (the tier stays); an
// identity new in the current window gets its free credit there either
// way. Caught mutation: the light tier rolling with any request (two
// windows ahead, forgot reaches the current window: the new identity's
// request goes to Redis).
func TestEarlyStampKeepsTheCurrentWindow(t *testing.T) {
	for _, ahead := range []int64{1, 2, 3} {
		m := newTestMachine(t, nil)
		x := int64(w0 / testWindow)
		m.Tick(w0 + 50) // the PoP's clock: window x
		d, c := m.Request(w0+ahead*testWindow+100, "early", 1)
		require.Nil(t, c, "%d ahead", ahead)
		assert.Equal(t, SrcFree, d.Source, "%d ahead: its own free credit", ahead)
		assert.Less(t, m.forgot, x, "%d ahead: window x keeps its state", ahead)
		d, c = m.Request(w0+200, "new", 1)
		assert.Nil(t, c, "%d ahead", ahead)
		assert.Equal(t, SrcFree, d.Source, "%d ahead: an identity new in x spends its slot of x", ahead)
	}
}

// TestPeekInForgottenWindow: a peek at a time in a forgotten window counts
// no free slot of it, as the request would get none. Caught mutation: the
// peek adding the slot (allowed, where the request asks Redis and Redis'
// headroom is 0).
func TestPeekInForgottenWindow(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	m.Request(w0+2*testWindow+100, "other", 1) // the light tier in x+2: x is forgotten
	_, c := m.Peek(w0+100, "k")
	require.NotNil(t, c)
	d := m.PeekDone(w0+150, c, &Result{Now: w0 + 120, Window: x, Items: []ItemResult{{Headroom: 0, CW: 5, CPrev: 1, Retry: 500}}}, nil)
	_, call := m.Request(w0+160, "k", 1)
	require.NotNil(t, call, "no free credit in a forgotten window: Redis decides")
	assert.False(t, d.Allowed, "the peek counts no slot of x")
}

// TestClaimsSkipEveryUsedSlot: after free units in windows x, x+1 and x+2
// (x+2 stamped a window ahead), a request stamped in x+1 asks Redis and
// its Call reports the use of x (its op claims x's slot at Redis) but
// gives none of the used slots up a second time. Caught mutation: claims
// skipping only the last two used windows (x claimed twice: K_x counts
// this PoP twice and hides another PoP's slot).
func TestClaimsSkipEveryUsedSlot(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	for _, now := range []int64{w0 + 2000, w0 + testWindow + 1000, w0 + 2*testWindow + 500} {
		d, c := m.Request(now, "b", 1)
		require.Nil(t, c)
		require.Equal(t, SrcFree, d.Source)
	}
	_, c := m.Request(w0+testWindow+4000, "b", 1) // in x+1
	require.NotNil(t, c)
	var freeOps []int64
	for _, o := range c.Items[0].Ops {
		if o.GW == GWFree {
			freeOps = append(freeOps, o.X)
		}
	}
	assert.Contains(t, freeOps, x, "x's use is reported in this Call")
	for _, y := range []int64{x, x + 1, x + 2} {
		assert.NotContains(t, c.Items[0].Claims, y, "window %d's slot was used: not given up", y)
	}
}

// TestPeekAheadOfTheTicks: a peek at a time two windows past the last
// Tick's counts the identity's free slot there, as the request gets it
// (on a full entry, the light tier not rolling that far). Caught mutation:
// the peek treating such a window as forgotten (denied, where the request
// is admitted free).
func TestPeekAheadOfTheTicks(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	m.Tick(w0 + 50)
	at := int64(w0 + 2*testWindow + 100) // x+2
	_, c := m.Peek(at, "k")
	require.NotNil(t, c)
	d := m.PeekDone(at+50, c, &Result{Now: at + 20, Window: x + 2, Items: []ItemResult{{Headroom: 0, CW: 5, CPrev: 1, Retry: 500}}}, nil)
	got, call := m.Request(at+60, "k", 1)
	require.Nil(t, call)
	require.Equal(t, SrcFree, got.Source, "the request spends its slot of x+2")
	assert.True(t, d.Allowed, "so the peek counts it")
}
