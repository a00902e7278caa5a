package budget

import (
	"math"

	"github.com/edgelimit/edgelimit/core"
)

// claims returns the free-slot claims an item about e sent in window x
// carries: every slot from x−1 on consumed here and not yet claimed, and,
// when e is contested or hot, every slot through x+1 (the current and
// next windows' slots are given up); it marks them consumed and sent. Far
// from the limit a reserved slot costs no one, so a calm identity keeps
// its free credit in every window. A slot
// free credit used is not among them: the op reporting the use claims it,
// so Redis never sees the claim without the units.
func (m *Machine) claims(e *entry, x int64) []int64 {
	through := e.claimed
	if m.contested(e) || e.renounce {
		through = max(through, x+1)
	}
	var out []int64
	for y := max(e.sentClaims+1, x-1); y <= through; y++ {
		if y != e.usedFree {
			out = append(out, y)
		}
	}
	e.claimed, e.sentClaims = through, through
	return out
}

// contested reports whether Redis last said e has little headroom (under a
// quarter of the limit): grants then cover a short horizon and an idle
// PoP returns its balance at once, so the headroom follows demand.
func (m *Machine) contested(e *entry) bool {
	return e.headroom >= 0 && e.headroom < m.cfg.Limit.Max/4
}

// horizon is the ms a contested identity's grant should last: four Sync
// intervals plus RTTs (measured on pop-sim against two: mixed near-limit
// clients 0.927 -> 0.948 of pure Redis' quota, p99 95 -> 73 ms; the crowd
// of flash-crowd 0.930 -> 0.922).
func (m *Machine) horizon() float64 {
	return 4 * float64((m.cfg.SyncInterval + m.cfg.RTT).Milliseconds())
}

// busy reports whether e is expected to ask here again before a grant
// asked now lands (one unit or more over the horizon): denying it here
// then costs one request, and the next Sync's grant serves the next ones.
// A sparse identity is not busy: it is sent to Redis, since a grant asked
// for it would come after its request and sit unused.
func (m *Machine) busy(e *entry) bool {
	rate := max(e.rate, float64(e.demand)/float64(m.cfg.SyncInterval.Milliseconds()))
	return rate*m.horizon() >= 1
}

// topUp is the grant e should ask for at window x: its demand rate over the
// horizon (a window when e is far from its limit; twice the Sync interval
// plus the RTT when contested), at least 1 while it has demand and at most
// a quarter of the limit, minus its live balance.
func (m *Machine) topUp(e *entry, x int64) int64 {
	rate := max(e.rate, float64(e.demand)/float64(m.cfg.SyncInterval.Milliseconds()))
	horizon := float64(m.w)
	if m.contested(e) {
		horizon = m.horizon()
	}
	want := min(int64(math.Ceil(rate*horizon)), max(1, m.cfg.Limit.Max/4))
	if e.demand > 0 {
		want = max(want, 1)
	}
	var bal int64
	for _, g := range e.grants {
		if g.win >= x { // a grant of x−1 ends with x, and an item gives up x+1's free slot
			bal += g.bal
		}
	}
	return max(0, want-bal)
}

// addOp records op in e's unreported ops, merged with one of the same
// windows.
func (e *entry) addOp(op Op) {
	for i := range e.ops {
		if e.ops[i].X == op.X && e.ops[i].GW == op.GW {
			e.ops[i].U += op.U
			return
		}
	}
	e.ops = append(e.ops, op)
}

// absorb applies Redis' answer about e: the grant, the lower bound of C,
// and a deny-until when C alone already denies a unit.
func (m *Machine) absorb(e *entry, r *Result, it ItemResult) {
	if it.Grant > 0 {
		i := 0
		if e.grants[1].win == r.Window || (e.grants[0].win != r.Window && e.grants[1].win < e.grants[0].win) {
			i = 1
		}
		if e.grants[i].win != r.Window {
			e.grants[i] = grantSlot{win: r.Window}
		}
		e.grants[i].bal += it.Grant
		e.fullUntil = 0
	}
	if r.Window >= e.lowW {
		e.lowW, e.lowC, e.lowPrev = r.Window, it.CW, it.CPrev
		elapsed := r.Now - r.Window*m.w
		if !core.SlidingAdmits(core.SlidingEstimate(it.CW, it.CPrev, elapsed, m.w), m.cfg.Limit.Max, 1) {
			retry := core.SlidingRetryMillis(it.CW, it.CPrev, elapsed, m.w, m.cfg.Limit.Max, 1)
			e.denyUntil = max(e.denyUntil, r.Now+retry)
		}
	}
	if it.Headroom > 0 || it.Grant > 0 {
		e.fullUntil = 0
	} else {
		// Known full: requests the budget cannot cover are denied here
		// until one unit would fit; Syncs still ask grants for the demand.
		e.fullUntil = max(e.fullUntil, r.Now+max(1, it.Retry))
	}
	e.headroom = it.Headroom
}
