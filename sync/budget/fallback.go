package budget

import "github.com/edgelimit/edgelimit/core"

// fallbackAdmits decides n units on the view while Redis is down: Redis'
// last lower bound of C plus what this PoP admitted that no reply has
// counted yet (unreported), under core's sliding rule, and this PoP's own
// admissions within its share of the limit: for an identity whose units
// Redis last counted came from other PoPs too, this PoP's part of what
// Redis had accounted for (outageShare: the PoPs' shares sum to at most
// 1); once that count is older than the previous window, an equal share,
// Max/P, for an identity Redis last called contested; else the whole
// limit. PoPs falling back together then admit about the limit between
// them for an identity they all serve, each in proportion to what it
// served, instead of up to Max − C each, while an identity one PoP
// serves keeps its whole limit there. Adding all of this PoP's own
// admissions to C instead counted the reported ones twice: an identity
// one PoP served near its limit was denied for most of an outage and
// then, Redis back, admitted in a burst the exact log counts past the
// limit (docs/budget.md, Rules, has the three mistakes this replaced).
func (m *Machine) fallbackAdmits(now int64, e *entry, n int64) bool {
	x := m.window(now)
	own := e.own
	own.Roll(x)
	elapsed := now - x*m.w
	cur, prev := m.viewCounts(e, x)
	if !core.SlidingAdmits(core.SlidingEstimate(cur, prev, elapsed, m.w), m.cfg.Limit.Max, n) {
		return false
	}
	share := 1.0
	switch {
	case e.lowW < x-1:
		// Redis' last count is older than the previous window, and so
		// are this PoP's counts it could be compared with: an equal
		// share for a contested identity (this PoP's counts of that
		// window are gone, and read as 0 they denied a contested
		// identity for the rest of the outage)
		if m.contested(e) {
			share = 1 / float64(m.cfg.PoPs)
		}
	case e.lowC > 0 && !m.sole(e):
		// served elsewhere too: this PoP's share of the units Redis had
		// accounted for at its last word (its reported ones against C
		// plus what was granted or reserved, Max less the headroom: with
		// C alone, a PoP whose last reply was early in a burst took a
		// third of the limit against a C of 30 that was 99 by then; with
		// its unreported units too, the shares of a burst's PoPs summed
		// past 1)
		share = m.outageShare(e)
	}
	mine := core.SlidingEstimate(own.Cur, own.Prev, elapsed, m.w)
	return mine+float64(n) <= share*float64(m.cfg.Limit.Max)
}

// outageShare is this PoP's share of the limit for e while Redis is down,
// for an identity Redis last counted units of from other PoPs too: the
// units this PoP reported that Redis' last reply counted, against what
// Redis had accounted for then (C or, when more, Max less the headroom:
// what was granted or reserved as well), both over the sliding window
// as it stood when that reply's call was sent (e.heard): Redis' last
// window and the one before it, weighted as core's sliding rule weighs
// them. The shares of the PoPs sum to at most 1 when their last replies
// agree. Read in Redis' last window alone, a PoP whose last reply was a
// Sync's at the start of a window, before it had admitted anything
// there, had share 0 and denied an identity it served every request for
// the rest of the outage, up to two windows (TestOutageShareAcrossWindows).
func (m *Machine) outageShare(e *entry) float64 {
	k := 1 - float64(e.heard-e.lowW*m.w)/float64(m.w)
	k = min(1, max(0, k))
	mine := float64(max(0, m.reported(e))) + k*float64(max(0, m.reportedIn(e, e.lowW-1)))
	counted := float64(e.lowC) + k*float64(e.lowPrev)
	return mine / max(counted, float64(m.cfg.Limit.Max-max(0, e.headroom)))
}
