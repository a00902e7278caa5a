package budget

import (
	"slices"

	"github.com/edgelimit/edgelimit/core"
)

// What this PoP knows was admitted of an identity: Redis' last counts, its
// own admissions by window, and those no reply has counted yet.

// viewCounts is the view's lower bounds of the units all PoPs admitted of
// e in window x and in the one before: Redis' last counts plus this PoP's
// unreported units, or this PoP's own counts when larger.
func (m *Machine) viewCounts(e *entry, x int64) (cur, prev int64) {
	own := e.own
	own.Roll(x)
	cur, prev = m.unreported(e, x), m.unreported(e, x-1)
	switch e.lowW {
	case x:
		cur, prev = cur+e.lowC, prev+e.lowPrev
	case x - 1:
		prev += e.lowC
	}
	return max(cur, own.Cur), max(prev, own.Prev)
}

// heavy reports whether the units the view knows were admitted of e
// (viewCounts, under core's sliding rule at now, in window x) reach 3/8
// of the limit. NoWait denies here a contested identity's request no
// grant covers only then: below it, what leaves the identity little
// headroom is budget held (grants, the PoPs' free-credit reservations),
// not admissions, and the request goes to Redis, which admits it unless
// that budget is spent. At 32 PoPs the reservations alone hold 64 of a
// limit of 100 across two windows, so calm identities (pop-sim's send at
// most 0.3 of their limit a window) read contested: denying them here
// wrongly limited 16 over the 22 lines of scripts/budget-lines.sh DIR
// budget-nowait; with the test at a quarter of the limit 2, at 3/8 none
// (round trips saved −0.0–1.1 point, the worst identity at 32 PoPs'
// spread-attack 1.07 against pure Redis' 1.06), at a half none, at
// more cost (1.08, and −0.0–1.3 points).
func (m *Machine) heavy(e *entry, now, x int64) bool {
	cur, prev := m.viewCounts(e, x)
	return 8*core.SlidingEstimate(cur, prev, now-x*m.w, m.w) >= 3*float64(m.cfg.Limit.Max)
}

// countOwn counts n units admitted here at t into e.own, in t's window
// (the one before e.own's current one included). Counting through
// core's DecideSliding dropped the units its own sliding rule would have
// denied, and counting a Redis decision at its reply's arrival put it in
// the next window when the reply crossed a boundary: either made an
// identity served here alone look served elsewhere too.
func (m *Machine) countOwn(e *entry, t, n int64) {
	switch x := m.window(t); {
	case x >= e.own.Index:
		e.own.Roll(x)
		e.own.Cur += n
	case x == e.own.Index-1:
		e.own.Prev += n
	}
}

// ownIn is the units s counts in window y: this PoP's admissions there.
// Comparing it with C of the same window tells whether Redis knows units
// other PoPs admitted (the sums of two windows compared windows that need
// not be the same ones: an identity served here alone, once this PoP's
// counts had moved to a window Redis' last reply had not, read as served
// elsewhere, and the fallback denied it for the whole outage).
func ownIn(s core.WindowState, y int64) int64 {
	switch s.Index {
	case y:
		return s.Cur
	case y + 1:
		return s.Prev
	}
	return 0
}

// unreported is the units this PoP admitted of e in window y that no reply
// has counted: e's ops not yet in a batch, and its item's ops in its
// group's batch whose reply has not come (in flight, or to be sent again).
// A batch Redis applied whose reply was lost is counted here too: an
// over-estimate of at most that batch.
func (m *Machine) unreported(e *entry, y int64) int64 {
	var u int64
	count := func(ops []Op) {
		for _, o := range ops {
			if o.X == y {
				u += o.U
			}
		}
	}
	count(e.pending())
	m.reports.count(e.key, y, &u)
	if e.inBatch {
		gs := &m.groups[m.group(int(e.bucket))]
		for _, c := range []*Call{gs.inflight, gs.retry} {
			if c == nil {
				continue
			}
			if i, ok := slices.BinarySearchFunc(c.Items, e.key, func(it Item, k string) int { return cmpString(it.Key, k) }); ok {
				count(c.Items[i].Ops)
			}
		}
	}
	return u
}
