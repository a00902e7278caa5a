package traffic

import "time"

// class is one kind of identity in a scenario.
type class uint8

const (
	calm            class = iota // far below the limit, pinned, Zipf-like popularity
	attackers                    // 2–10× the limit, spread over all PoPs
	spreadAttackers              // 1–10× the limit, spread over all PoPs
	pinnedAttackers              // 2–10× the limit, on one PoP
	near                         // 0.7–1.3× the limit, on one to three PoPs
	pinnedNear                   // 0.7–1.3× the limit, on one PoP
	bursts                       // a full limit on each side of a window boundary
	crowd                        // 0.5–1.5× the limit in a short spike, all PoPs
	nearSpread                   // 1.0–1.1× the limit, spread over all PoPs: where approximations are hardest
	warm                         // 0.8–1.2× the limit, on a home PoP or it and one or two neighbours: an edge's warm head
)

// classShare caps the identities any one non-calm class may take.
const classShare = 10

// fill spends about budget requests on identities of class k.
func (g *gen) fill(k class, budget int) {
	if k == calm {
		g.fillCalm(g.c.Requests - len(g.reqs))
		return
	}
	if g.shape.tight {
		g.fillTight(k, budget)
		return
	}
	first, got := g.claim(max(1, g.c.Identities/classShare))
	g.mark(first, got, k)
	for id := first; id < first+got && budget > 0; id++ {
		budget -= g.member(k, id, budget)
	}
}

// fillTight is fill taking identities one at a time as they send, up to
// the same tenth of them all, so the ones left go to the calm population.
func (g *gen) fillTight(k class, budget int) {
	for range max(1, g.c.Identities/classShare) {
		id, got := g.claim(1)
		if got == 0 || budget <= 0 {
			g.nextID -= got
			return
		}
		g.mark(id, 1, k)
		budget -= g.member(k, id, budget)
	}
}

// member generates identity id of class k, spending at most budget
// requests, and returns how many it made.
func (g *gen) member(k class, id, budget int) int {
	lim, windows := float64(g.c.Limit), g.windows()
	rate := func(lo, hi float64) int { return min(budget, int(g.uniform(lo, hi)*lim*windows+0.5)) }
	var n int
	switch k {
	case attackers:
		n = rate(2, 10)
		g.emit(id, n, 0, g.dur, g.spread())
	case spreadAttackers:
		n = rate(1, 10)
		g.emit(id, n, 0, g.dur, g.spread())
	case pinnedAttackers:
		n = rate(2, 10)
		g.emit(id, n, 0, g.dur, g.pinned())
	case near:
		n = rate(0.7, 1.3)
		g.emit(id, n, 0, g.dur, g.half(g.few))
	case pinnedNear:
		n = rate(0.7, 1.3)
		g.emit(id, n, 0, g.dur, g.pinned())
	case nearSpread:
		n = rate(1.0, 1.1)
		g.emit(id, n, 0, g.dur, g.spread())
	case warm:
		n = rate(0.8, 1.2)
		g.emit(id, n, 0, g.dur, g.half(g.few))
	case bursts:
		n = g.burst(id, budget)
	case crowd:
		n = g.spike(id, min(budget, int(g.uniform(0.5, 1.5)*lim+0.5)))
	}
	return n
}

// burst sends up to a full limit in the last tenth of a window and up to
// another in the first tenth of the next, at a random boundary with a tenth
// of a window of trace after it.
func (g *gen) burst(id, budget int) int {
	w := g.c.Window
	b := time.Duration(1+g.rng.IntN(int((g.dur-w/10)/w))) * w
	each := min(int(g.c.Limit), budget/2)
	pops := g.half(g.spread)
	g.emit(id, each, b-w/10, b, pops)
	g.emit(id, each, b, b+w/10, pops)
	return 2 * each
}

// spike sends n requests from all PoPs within Config.CrowdSpan (default a
// fifth of a window) starting in the middle of the trace: a flash crowd.
// The times are drawn over the default span and then scaled to the span
// asked for, so the random draws, and every other request of the trace,
// are the same whatever the span: only the crowd's arrival times change.
func (g *gen) spike(id, n int) int {
	from := g.dur/2 + g.between(0, g.c.Window/10)
	base, span := DefaultCrowdSpan(g.c.Window), g.c.crowdSpan()
	first := len(g.reqs)
	g.emit(id, n, from, from+base, g.spread())
	if span != base {
		scale := float64(span) / float64(base)
		for i := first; i < len(g.reqs); i++ {
			r := &g.reqs[i]
			r.At = from + time.Duration(float64(r.At-from)*scale).Truncate(time.Microsecond)
		}
	}
	return n
}
