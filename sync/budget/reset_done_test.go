package budget

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResetDone: a Reset is planned on an identity with 2 unreported
// units spent of its grant and Redis' word (C 6); one more unit is spent
// while its Call is in flight and a reply sets a deny-until meanwhile.
// Planning forgets nothing: the spends the Call took stay counted as
// unreported, the own counts and Redis' word stay. Then ResetDone:
//   - applied (nil): the view forgets Redis' word, the deny-until and
//     the own counts of before the Reset; the unit spent in flight stays
//     (its op pending, its own count);
//   - failed (a *core.UnavailableError, applied or not): the view is as
//     it was, the in-flight unit's op pending, and the 2 units the Call
//     took go again with the next Tick as they were, under the Reset's
//     number and guard, counted as unreported meanwhile, once;
//   - redirected (nothing applied): the view as it was, the 2 units back
//     among the pending ops beside the in-flight one, nothing sent again.
//
// A second ResetDone changes nothing. Caught mutations: the view
// forgotten when the Reset is planned (the old behaviour), the ops the
// Call took left out of the unreported units while it is in flight,
// the unit admitted in flight forgotten by an applied Reset (own 0),
// a failed Reset's ops dropped, put back among the pending ops (sent
// twice when Redis had applied the Reset), or sent under a new number.
func TestResetDone(t *testing.T) {
	x := int64(w0 / testWindow)
	gone := &core.UnavailableError{Op: "budget script", Err: errors.New("read tcp: i/o timeout")}
	redirected := &RedirectError{Op: "budget script", Err: errors.New("MOVED 1 127.0.0.1:1")}
	for _, tc := range []struct {
		name string
		err  error
	}{{"applied", nil}, {"failed", gone}, {"redirected", redirected}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
			e := m.entry("k")
			e.grants[0] = grantSlot{win: x, bal: 5}
			e.lowW, e.lowC, e.headroom = x, 6, 4
			d, c := m.Request(w0+10, "k", 2)
			require.Nil(t, c)
			require.Equal(t, SrcGrant, d.Source)
			took := slices.Clone(e.pending())
			require.Equal(t, []Op{{X: x, GW: x, U: 2}}, took)
			ownBefore := e.own

			rc := m.Reset(w0+20, "k")
			assert.Empty(t, e.pending(), "the Call took the spends: no Sync sends them meanwhile")
			assert.Equal(t, int64(2), m.unreported(e, x), "still counted as unreported")
			assert.Equal(t, ownBefore, e.own, "nothing forgotten while in flight")
			assert.Equal(t, int64(6), e.lowC)

			d, c = m.Request(w0+30, "k", 1)
			require.Nil(t, c)
			require.Equal(t, SrcGrant, d.Source, "a unit spent while the Reset is in flight")
			e.denyUntil = w0 + 1000 // a reply's word while the Reset is in flight

			m.ResetDone(rc, tc.err)
			switch tc.err {
			case nil:
				assert.Equal(t, []Op{{X: x, GW: x, U: 1}}, e.pending(), "the unit spent in flight, still to report")
				assert.Equal(t, int64(1), m.unreported(e, x))
				assert.Equal(t, core.WindowState{Index: x, Cur: 1}, e.own, "only the unit admitted in flight stays counted")
				assert.Zero(t, e.denyUntil)
				assert.Equal(t, int64(math.MinInt64), e.lowW, "Redis' word forgotten")
				assert.Zero(t, e.lowC)
				assert.Equal(t, int64(-1), e.headroom)
				assert.Empty(t, m.reports.redo, "nothing to send again")
			case gone:
				assert.Equal(t, []Op{{X: x, GW: x, U: 1}}, e.pending(), "the unit spent in flight")
				assert.Equal(t, int64(3), m.unreported(e, x), "the units the Call took, counted once")
				assert.Equal(t, ownBefore.Cur+1, e.own.Cur, "the view as it was, with the unit spent in flight")
				assert.Equal(t, int64(w0+1000), e.denyUntil)
				assert.Equal(t, int64(6), e.lowC)
				require.Len(t, m.reports.redo, 1, "the units the Call took go again")
				redo := m.reports.redo[0]
				assert.Equal(t, took, redo.Items[0].Ops, "as the view held them, without the reset")
				assert.Equal(t, rc.Seq, redo.Seq, "under the Reset's number")
				assert.Equal(t, "rseq", redo.guard, "and guard: applied once, with the Reset or without it")
				assert.True(t, m.reports.room(), "the Resets' numbers do not hold back decisions' reports")
				var sent *Call
				for _, k := range m.Tick(w0 + 40) {
					if k.redo {
						sent = k
					}
				}
				require.Equal(t, redo, sent, "the next Tick sends it")
				m.Finish(sent, &Result{Now: w0 + 41, Window: x, Retried: true, Leased: -1, LeasedFrom: -1, Items: []ItemResult{{Allowed: -1}}}, nil)
				assert.Empty(t, m.reports.redo, "found applied: done")
				assert.Equal(t, int64(1), m.unreported(e, x), "and no longer counted")
			default:
				assert.Equal(t, []Op{{X: x, GW: x, U: 3}}, e.pending(), "nothing applied: the units the Call took back among the pending, beside the unit spent in flight")
				assert.Equal(t, int64(3), m.unreported(e, x))
				assert.Equal(t, ownBefore.Cur+1, e.own.Cur)
				assert.Equal(t, int64(w0+1000), e.denyUntil)
				assert.Equal(t, int64(6), e.lowC)
				assert.Empty(t, m.reports.redo, "nothing to send again")
			}
			pending, own, deny := slices.Clone(e.pending()), e.own, e.denyUntil
			m.ResetDone(rc, nil)
			assert.Equal(t, pending, e.pending(), "a second ResetDone changes nothing")
			assert.Equal(t, own, e.own)
			assert.Equal(t, deny, e.denyUntil)
		})
	}
}

// TestResetBacklog: after a Reset that failed carrying unreported spends,
// 31 more Resets may run before the next Tick sends those spends again
// under the failed one's number; the 32nd is refused (Reset returns nil,
// planning nothing: Redis keeps a window of 32 of the Resets' numbers and
// would refuse the failed one's, so its spends would never be applied),
// until the Tick's resend is applied. Caught mutation: Reset numbering past
// the window (its 32nd Call planned).
func TestResetBacklog(t *testing.T) {
	x := int64(w0 / testWindow)
	m := newTestMachine(t, func(c *Config) { c.FreeCredit = -1 })
	e := m.entry("k")
	e.grants[0] = grantSlot{win: x, bal: 5}
	_, c := m.Request(w0+10, "k", 1)
	require.Nil(t, c, "spent from the grant: an op to report")
	failed := m.Reset(w0+20, "k")
	require.NotNil(t, failed)
	m.ResetDone(failed, &core.UnavailableError{Op: "budget script", Err: errors.New("read tcp: i/o timeout")})
	require.Len(t, m.reports.redo, 1, "its spend goes again")

	for i := range reportWindow - 1 {
		rc := m.Reset(w0+30, "other")
		require.NotNil(t, rc, "Reset %d after the failed one: within the window", i+1)
		m.ResetDone(rc, nil)
	}
	assert.Nil(t, m.Reset(w0+30, "other"), "one more would push the failed Reset's number out of Redis' window")

	var sent *Call
	for _, k := range m.Tick(w0 + 40) {
		if k.redo {
			sent = k
		}
	}
	require.NotNil(t, sent, "the Tick sends the failed Reset's spend again")
	assert.Nil(t, m.Reset(w0+45, "other"), "still refused while the resend is in flight")
	m.Finish(sent, &Result{Now: w0 + 41, Window: x, Leased: -1, LeasedFrom: -1, Items: []ItemResult{{Allowed: -1}}}, nil)
	assert.NotNil(t, m.Reset(w0+50, "other"), "applied: Resets go on")
}
