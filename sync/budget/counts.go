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
