package budget

import (
	"math"
	"slices"

	"github.com/edgelimit/edgelimit/core"
)

// A Reset is planned (Reset) and then, once its Call's outcome is known,
// applied to the view (ResetDone): the view is forgotten only when Redis
// applied the Call, so a Reset whose call fails leaves the identity
// decided as before, above all by the outage fallback, which would
// otherwise admit on a forgotten view while Redis still holds every count.

// resetting is what a Reset's Call took from its identity's view when it
// was planned; the zero value took nothing (no full entry).
type resetting struct {
	e    *entry           // the identity's full entry then (nil: none)
	own  core.WindowState // its own counts then
	ops  []Op             // its unreported ops, as the view held them
	done bool             // ResetDone applied the Call's outcome
}

// Reset returns the Call that forgets what Redis counted of key (every
// window's C), with this PoP's unreported ops of key in it: its spends go
// back as returns (the grant at Redis shrinks, nothing is counted), its
// used free slots are claimed with no units. Budget any PoP holds
// (grants, free slots) stays accounted at Redis, so a Reset never lets the
// PoPs together pass the limit; units another PoP admitted before the
// Reset and reports after it, and this PoP's in a batch already in flight,
// are counted after it. The Call has a sequence number of its own guard
// ('rseq'), so Redis applies it at most once; the caller sends one Reset
// at a time and hands its outcome to ResetDone. Until then the view is
// not forgotten: decisions go on as before the Reset, and the ops the
// Call took stay counted among the identity's unreported units (no Sync
// sends them meanwhile). A Reset whose call fails leaves the view as it
// was and loses none of those ops (ResetDone). Reset returns nil, planning
// nothing, while a failed Reset's ops wait to be sent again
// reportWindow − 1 numbers behind the next: one more Reset would push them
// out of the window Redis keeps of the sequence, and Redis would never
// apply them (the next Tick sends them; the caller Resets again after it).
func (m *Machine) Reset(now int64, key string) *Call {
	if !m.reports.fits("rseq", m.rseq+1) {
		return nil
	}
	b := m.bucket(key)
	it := Item{Key: key, Bucket: b}
	rs := &resetting{}
	if e := m.view[key]; e != nil {
		rs.e, rs.own, rs.ops = e, e.own, e.takeOps()
		for _, o := range rs.ops {
			switch {
			case o.GW >= 0 && o.X >= 0:
				it.Ops = append(it.Ops, Op{X: -1, GW: o.GW, U: o.U})
			case o.GW >= 0:
				it.Ops = append(it.Ops, o) // a return stays one
			case o.GW == GWFree:
				it.Ops = append(it.Ops, Op{X: o.X, GW: GWFree})
			}
		}
	}
	it.Ops = append(it.Ops, Op{GW: GWReset})
	m.rseq++
	c := &Call{Group: m.group(b), Seq: m.rseq, Now: now, Items: []Item{it}, hotWin: -1, guard: "rseq", reset: rs}
	m.reports.resets = append(m.reports.resets, c)
	m.count(c)
	return c
}

// ResetDone applies the outcome of Reset Call c: err nil when Redis
// applied it. Then the view of its identity is forgotten: its own counts
// of the admissions made before the Reset was planned (those made while
// it was in flight stay, as their ops do), its deny-until and known-full
// wait, Redis' last word (its lower bound, headroom, last wait; also a
// word a reply brought while the Reset was in flight, whose call Redis may
// have run before the Reset: the next reply tells the count again). A
// *RedirectError (nothing applied) leaves the view as it was and puts the
// ops the Call took back among the unreported, for the next Sync. Any
// other error (a failed call, a timeout, a caller gone while Redis had
// it: applied or not) leaves the view as it was too, and the ops the Call
// took go to Redis again with the next Tick, as they were, under the
// Reset's sequence number and without the reset: Redis applies them once,
// with the Reset or without it, and they stay counted on the view until a
// reply says so. A Call handed back again, or a Call no Reset planned,
// changes nothing.
func (m *Machine) ResetDone(c *Call, err error) {
	rs := c.reset
	if rs == nil || rs.done {
		return
	}
	rs.done = true
	if i := slices.Index(m.reports.resets, c); i >= 0 {
		m.reports.resets = slices.Delete(m.reports.resets, i, i+1)
	}
	it := c.Items[0]
	switch {
	case err == nil:
		if e := m.view[it.Key]; e != nil {
			m.forgetView(e, rs)
		}
		m.resetHeard(it.Key, m.window(c.Now+m.redis.ahead())) // Redis' window, as hear reads them
	case len(rs.ops) == 0:
	case misrouted(err):
		e := m.entry(it.Key)
		for _, o := range rs.ops {
			e.addOp(o)
		}
		m.mark(e)
	default:
		m.reports.redo = append(m.reports.redo, &Call{Group: c.Group, Seq: c.Seq, Now: c.Now, hotWin: -1, guard: c.guard, redo: true,
			Items: []Item{{Key: it.Key, Bucket: it.Bucket, Ops: rs.ops}}})
	}
}

// forgetView forgets e's view after a Reset that Redis applied, which was
// planned when e's own counts were rs.own (when e is the entry it was
// planned on: a later one holds only admissions made since).
func (m *Machine) forgetView(e *entry, rs *resetting) {
	if before := rs.own; e == rs.e {
		before.Roll(e.own.Index) // e.own only moves on
		if before.Index == e.own.Index {
			e.own.Cur = max(0, e.own.Cur-before.Cur)
			e.own.Prev = max(0, e.own.Prev-before.Prev)
		}
	}
	e.denyUntil, e.fullUntil, e.retryAt, e.headroom = 0, 0, 0, -1
	e.lowW, e.lowC, e.lowPrev = math.MinInt64, 0, 0
}
