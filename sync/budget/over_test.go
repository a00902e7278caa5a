package budget

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFullWaitFollowsShare: once the admissions Redis knows of fill the
// limit, a greedy PoP waits the time the limit takes to free one unit for
// its share of the identity's admissions (window / (Max × share)), at
// least two units' time and at most refill(): an identity served here
// alone waits two units' time instead of P units' time, a gap after which
// the decayed previous window lets a burst through that the exact log
// counts against the limit.
func TestFullWaitFollowsShare(t *testing.T) {
	const pops, max = 8, 100
	unit := int64(testWindow / max) // ms the limit takes to free one unit
	for _, tc := range []struct {
		own, cw int64 // units admitted here, and C at Redis, in the window
		wait    int64 // ms denied here after the full reply
	}{
		{own: 96, cw: 96, wait: 2 * unit},    // every unit admitted here: the floor of two units
		{own: 99, cw: 96, wait: 2 * unit},    // more here than Redis counted (spends unreported): the whole share
		{own: 48, cw: 96, wait: 2 * unit},    // half of them
		{own: 32, cw: 96, wait: 3 * unit},    // a third
		{own: 12, cw: 96, wait: pops * unit}, // 1/P of them: refill()
		{own: 3, cw: 96, wait: pops * unit},  // under 1/P: never past refill()
	} {
		t.Run(fmt.Sprintf("%d of %d here", tc.own, tc.cw), func(t *testing.T) {
			m := newTestMachine(t, func(c *Config) {
				c.Limit, c.PoPs = core.PerWindow(max, testWindow*time.Millisecond), pops
			})
			require.Equal(t, pops*unit, m.refill(), "refill() is P × window / Max")
			d, c := m.Request(w0, "k", 1)
			require.Nil(t, c, "the first unit is free credit")
			require.Equal(t, SrcFree, d.Source, "the first unit is free credit")
			for i := int64(1); i < tc.own; i++ {
				_, c := m.Request(w0+i, "k", 1)
				require.NotNil(t, c, "unit %d: no grant, no free credit: Redis decides", i)
				d := m.Complete(w0+i, c, &Result{Now: w0 + i, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: i + 1, Headroom: 20}}}, nil)
				require.True(t, d.Allowed, "unit %d: Redis admitted it", i)
			}
			sent := w0 + tc.own
			_, c = m.Request(sent, "k", 1)
			require.NotNil(t, c, "the request after %d units goes to Redis", tc.own)
			at := sent + 1 // Redis' time of the call, and the reply's arrival
			require.Greater(t, tc.cw, int64(max-pops), "C alone fills the limit (saturated), so the greedy wait applies")
			d = m.Complete(at, c, &Result{Now: at, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: tc.cw, Headroom: 0, Retry: 1}}}, nil)
			require.False(t, d.Allowed, "Redis denied it")
			// the wait: where every unit Redis counted came from here,
			// max(retry, refillFor); else the retry (1 ms) plus a draw
			// from [0, refillFor)
			wait := 1 + spread("k", "p", at, tc.wait)
			if tc.own >= tc.cw {
				wait = tc.wait // ≥ the retry of 1 ms
			}
			require.Equal(t, sent+wait, m.view["k"].fullUntil, "%d of %d units here: the wait (refillFor %d ms)", tc.own, tc.cw, tc.wait)
			d, c = m.Request(sent+wait-1, "k", 1)
			assert.Nil(t, c, "%d of %d units here: no Call %d ms after the call went out (wait %d ms)", tc.own, tc.cw, wait-1, wait)
			assert.Equal(t, SrcFull, d.Source, "%d of %d units here: denied here during the wait", tc.own, tc.cw)
			_, c = m.Request(sent+wait, "k", 1)
			assert.NotNil(t, c, "%d of %d units here: Redis is asked again %d ms after the call went out", tc.own, tc.cw, wait)
		})
	}
}

// TestFullWaitAcrossBoundary: a full reply of window x that lands after
// this PoP admitted a unit in window x+1 still waits by this PoP's share
// of window x (two units' time for an identity served here alone), not
// refill().
func TestFullWaitAcrossBoundary(t *testing.T) {
	const pops, max = 8, 100
	unit := int64(testWindow / max)
	m := newTestMachine(t, func(c *Config) {
		c.Limit, c.PoPs = core.PerWindow(max, testWindow*time.Millisecond), pops
	})
	end := int64(w0 + testWindow) // window 1001 starts
	d, c := m.Request(w0, "k", 1)
	require.Nil(t, c, "the first unit is free credit")
	require.True(t, d.Allowed, "the first unit is free credit")
	for i := int64(1); i < 96; i++ {
		_, c := m.Request(w0+i, "k", 1)
		require.NotNil(t, c, "unit %d: Redis decides", i)
		require.True(t, m.Complete(w0+i, c, &Result{Now: w0 + i, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: i + 1, Headroom: 20}}}, nil).Allowed, "unit %d admitted", i)
	}
	_, last := m.Request(end-2, "k", 1) // decided at Redis in window 1000
	require.NotNil(t, last, "the request at the end of window 1000 goes to Redis")
	// a Sync's grant of window 1000 lands while that request is out
	calls := m.Tick(end - 1)
	require.Len(t, calls, 1, "the contested identity's batch")
	m.Finish(calls[0], &Result{Now: end - 1, Window: 1000, Items: []ItemResult{{Allowed: -1, Grant: 1, CW: 96, Headroom: 19}}}, nil)
	d, c = m.Request(end, "k", 1) // window 1001: admitted here from the grant before the reply lands
	require.Nil(t, c, "window 1001's first unit is served by window 1000's grant")
	require.True(t, d.Allowed, "window 1001's first unit is served by window 1000's grant")
	at := end + 1
	require.False(t, m.Complete(at, last, &Result{Now: end - 1, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 96, Headroom: 0, Retry: 1}}}, nil).Allowed, "Redis denied it")
	require.Less(t, 2*unit, m.refill(), "the test wants the share to bind, not refill()")
	wait := 2 * unit // served here alone: max(retry, refillFor), no draw
	require.Equal(t, end-2+wait, m.view["k"].fullUntil, "the wait is two units' time from when the call went out, not refill()")
	d, c = m.Request(end-2+wait-1, "k", 1)
	assert.Nil(t, c, "no Call before two units' time from when the call went out")
	assert.Equal(t, SrcFull, d.Source, "denied here during the wait")
	_, c = m.Request(end-2+wait, "k", 1)
	assert.NotNil(t, c, "Redis is asked again at the end of the wait (a share of window 1000 alone), not refill() = %d ms", m.refill())
}

// TestGrantFloor: a request's decision Call asks its top-up with the
// grant floor P while other PoPs' units are in Redis' count, 1 once every
// unit Redis counted in its last window was reported by this PoP (a grant
// here then denies no request elsewhere), and 1 under NoWait. A floor of
// P for a sole identity cost pinned identities 7.7 points of round trips;
// a floor of 1 for a shared one held a unit per PoP the requests elsewhere
// needed.
func TestGrantFloor(t *testing.T) {
	ask := func(m *Machine, at int64) *Call {
		t.Helper()
		_, c := m.Request(at, "g", 1)
		require.NotNil(t, c, "at %d: no grant or free credit covers it: a decision Call", at)
		return c
	}
	for name, tc := range map[string]struct {
		noWait   bool
		cw       int64 // Redis' count after this PoP's two units
		wantLast int64 // the floor of the Call after that reply
	}{
		"shared":        {cw: 5, wantLast: 4},
		"sole":          {cw: 2, wantLast: 1},
		"shared NoWait": {noWait: true, cw: 5, wantLast: 1},
	} {
		t.Run(name, func(t *testing.T) {
			m := newTestMachine(t, func(c *Config) {
				c.PoPs = 4
				c.Limit = core.PerWindow(40, testWindow*time.Millisecond)
				c.NoWait = tc.noWait
			})
			m.Request(w0-200, "g", 1) // free credit of the window before: seen 200 ms, settled
			m.Request(w0, "g", 1)     // free credit
			c := ask(m, w0+1)
			first := int64(4)
			if tc.noWait {
				first = 1
			}
			assert.Equal(t, first, c.Items[0].Floor, "nothing known of Redis' count yet: the policy's floor")
			m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: tc.cw - 1, Headroom: 20}}}, nil)
			b := m.Tick(w0 + 3) // reports the free unit
			require.Len(t, b, 1)
			m.Finish(b[0], &Result{Now: w0 + 4, Window: 1000, Items: []ItemResult{{Allowed: -1, CW: tc.cw, Headroom: 20}}}, nil)
			for _, g := range m.view["g"].grants {
				require.Zero(t, g.bal, "no grant was made: the next request asks Redis")
			}
			c = ask(m, w0+5)
			assert.Equal(t, tc.wantLast, c.Items[0].Floor, "Redis counts %d units, 2 of them this PoP's", tc.cw)
		})
	}
}

// TestGrantDivisor: a decision Call's item, and a Sync's, carries
// Divisor 1 (owned: its top-up granted up to the whole headroom) when
// Redis called the identity contested and every unit it counted of it,
// in its last window and the one before, is one this PoP reported.
// Another PoP's units in either window leave it 0 (the equal share)
// under the default, and make it C/mine over the two windows, rounded
// and held within [1, P], under NoWait (1 too where this PoP served most
// of them). A headroom far from the limit, or nothing counted in the
// window before (early in a window C holds only what was reported so
// far), leave it 0 under both. A mutation dropping any of owned's
// conditions, the clamp at P, or the policy's test fails a case here;
// one leaving Divisor out of the Sync's item fails every case but the
// zeros, and one leaving it out of the decision Call's item every case
// but the zeros and "under a P-th" (under NoWait a heavy contested
// identity's request is denied here, with no Call).
func TestGrantDivisor(t *testing.T) {
	for name, tc := range map[string]struct {
		prevHere bool  // this PoP admitted a unit in the window before
		cw       int64 // Redis' C of this window, after this PoP's 2 units
		cprev    int64 // Redis' C of the window before
		headroom int64
		divisor  int64 // under NoWait
		owned    bool  // the default's divisor is 1 if so, else 0
	}{
		"sole in both windows, contested": {prevHere: true, cw: 2, cprev: 1, headroom: 5, divisor: 1, owned: true},
		"another PoP's units now":         {prevHere: true, cw: 4, cprev: 2, headroom: 5, divisor: 2},  // 6/3
		"another PoP's units before":      {prevHere: true, cw: 2, cprev: 3, headroom: 5, divisor: 2},  // 5/3
		"most units here":                 {prevHere: true, cw: 3, cprev: 1, headroom: 5, divisor: 1},  // 4/3, not owned
		"a P-th of the units":             {prevHere: true, cw: 8, cprev: 4, headroom: 5, divisor: 4},  // 12/3 = P
		"under a P-th":                    {prevHere: true, cw: 15, cprev: 5, headroom: 5, divisor: 4}, // 20/3, held at P
		"far from the limit":              {prevHere: true, cw: 2, cprev: 1, headroom: 20},
		"nothing counted before":          {cw: 2, cprev: 0, headroom: 5},
	} {
		for _, noWait := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, NoWait %v", name, noWait), func(t *testing.T) {
				want := tc.divisor
				if !noWait { // the default: owned (1) or the equal share (0)
					want = 0
					if tc.owned {
						want = 1
					}
				}
				m := newTestMachine(t, func(c *Config) {
					c.PoPs = 4
					c.Limit = core.PerWindow(40, testWindow*time.Millisecond)
					c.NoWait = noWait
				})
				if tc.prevHere {
					m.Request(w0-200, "g", 1) // free credit of the window before
				} else {
					m.Request(w0-testWindow-200, "g", 1) // two windows before: seen long ago, nothing in the window before
				}
				m.Request(w0, "g", 1) // free credit
				_, c := m.Request(w0+1, "g", 1)
				require.NotNil(t, c, "no grant or free credit covers it: a decision Call")
				m.Complete(w0+2, c, &Result{Now: w0 + 2, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: tc.cw - 1, CPrev: tc.cprev, Headroom: tc.headroom}}}, nil)
				b := m.Tick(w0 + 3) // reports the free units
				require.Len(t, b, 1)
				m.Finish(b[0], &Result{Now: w0 + 4, Window: 1000, Items: []ItemResult{{Allowed: -1, CW: tc.cw, CPrev: tc.cprev, Headroom: tc.headroom}}}, nil)
				e := m.view["g"]
				require.NotNil(t, e, "a full entry")
				for _, g := range e.grants {
					require.Zero(t, g.bal, "no grant was made: the next request asks Redis")
				}
				require.Equal(t, int64(2), m.reported(e), "both units of this window are reported")
				_, c = m.Request(w0+300, "g", 1) // seen here 300 ms: settled, it asks a top-up
				if c != nil {
					require.Positive(t, c.Items[0].Want, "it asks a top-up")
					assert.Equal(t, want, c.Items[0].Divisor, "Redis counts %d units of this window, 2 of them this PoP's, and %d of the one before (headroom %d)", tc.cw, tc.cprev, tc.headroom)
					m.Complete(w0+301, c, &Result{Now: w0 + 301, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: tc.cw, CPrev: tc.cprev, Headroom: tc.headroom, Retry: 1}}}, nil)
				} else {
					require.True(t, noWait && tc.headroom < 10, "only NoWait denies a heavy contested identity's request here, without a Call")
				}
				m.Request(w0+400, "g", 1) // demand since the last Sync
				sync := itemOf(m.Tick(w0+401), "g")
				require.NotNil(t, sync, "the Sync plans an item for g")
				require.Positive(t, sync.Want, "it tops g up")
				assert.Equal(t, want, sync.Divisor, "the Sync's item has the decision Call's divisor")
			})
		}
	}
}

// TestGrantDivisorNothingHere: under NoWait, a contested identity this
// PoP admitted none of (Redis counted only other PoPs' units: mine is 0;
// 16 and 4 of them, so the identity is heavy and its request is denied
// here, the Sync's item asking the top-up) asks a quarter of an equal
// share (Divisor 0), not a part of its own: a
// mutation dropping the guard divides by zero, and one reading C/0 as
// +Inf clamped gave divisor 1, the whole headroom to a PoP that served
// nothing.
func TestGrantDivisorNothingHere(t *testing.T) {
	m := newTestMachine(t, func(c *Config) {
		c.PoPs, c.NoWait, c.FreeCredit = 4, true, -1
		c.Limit = core.PerWindow(40, testWindow*time.Millisecond)
	})
	_, c := m.Request(w0, "g", 1)
	require.NotNil(t, c, "no grant or free credit covers it: a decision Call")
	m.Complete(w0+1, c, &Result{Now: w0 + 1, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 16, CPrev: 4, Headroom: 5, Retry: 1}}}, nil)
	e := m.view["g"]
	require.NotNil(t, e, "a full entry")
	require.True(t, m.contested(e), "Redis said 5 units of 40 are left")
	require.Zero(t, m.reported(e)+m.reportedIn(e, e.lowW-1), "nothing of it admitted here")
	_, c = m.Request(w0+300, "g", 1)
	require.Nil(t, c, "NoWait denies a heavy contested identity's request here")
	item := itemOf(m.Tick(w0+301), "g")
	require.NotNil(t, item, "the Sync plans an item for g")
	require.Positive(t, item.Want, "it tops g up")
	assert.Zero(t, item.Divisor, "a quarter of an equal share")
}

// itemOf is the last item about key in calls, or nil.
func itemOf(calls []*Call, key string) *Item {
	var it *Item
	for _, c := range calls {
		for i := range c.Items {
			if c.Items[i].Key == key {
				it = &c.Items[i]
			}
		}
	}
	return it
}

// TestFullWaitsSpread: 32 PoPs denied at saturation by the same reply end
// their waits spread over [retry, retry + refill()), not together: every
// wait in that range, at least 24 distinct, and between them covering
// more than half of it. Waiting max(retry, refill()) ended them all at
// one instant, and the units freed meanwhile went out in a burst an exact
// log counts past the limit (spread-attack over 32 PoPs passed 1.16–1.22×
// the limit). A mutation dropping the draw, or drawing from a range that
// ignores the PoP, fails here.
func TestFullWaitsSpread(t *testing.T) {
	const pops, limit, retry = 32, 100, 3
	var waits []int64
	for p := range pops {
		m := newTestMachine(t, func(c *Config) {
			c.Limit, c.PoPs, c.PoP = core.PerWindow(limit, testWindow*time.Millisecond), pops, fmt.Sprintf("p%d", p)
		})
		for i := int64(0); i < 3; i++ { // greedy: three requests since the last Sync
			if _, c := m.Request(w0+i, "k", 1); c != nil {
				m.Complete(w0+i, c, &Result{Now: w0 + i, Window: 1000, Items: []ItemResult{{Allowed: 1, CW: 90 + i, Headroom: 20}}}, nil)
			}
		}
		_, c := m.Request(w0+5, "k", 1)
		require.NotNil(t, c, "PoP %d asks Redis", p)
		m.Complete(w0+6, c, &Result{Now: w0 + 6, Window: 1000, Items: []ItemResult{{Allowed: 0, CW: 99, Headroom: 0, Retry: retry}}}, nil)
		waits = append(waits, m.view["k"].fullUntil-(w0+6))
		require.Equal(t, pops*int64(testWindow/limit), m.refill())
	}
	refill := int64(pops * testWindow / limit)
	distinct := map[int64]bool{}
	lo, hi := waits[0], waits[0]
	for p, w := range waits {
		assert.GreaterOrEqual(t, w, int64(retry), "PoP %d waits at least the retry", p)
		assert.Less(t, w, retry+refill, "PoP %d waits less than the retry plus refill()", p)
		distinct[w] = true
		lo, hi = min(lo, w), max(hi, w)
	}
	assert.GreaterOrEqual(t, len(distinct), 24, "the waits are spread: %v", waits)
	assert.Greater(t, hi-lo, refill/2, "and cover more than half of refill(): %v", waits)
}
