package traffic

import "math"

// calmCap is the most a calm identity sends per window, as a fraction of the
// limit: far below it.
const calmCap = 0.3

// zipfExponent shapes calm popularity unless a scenario sets its own
// (share.zipf): identity of rank r gets weight r^-s.
const zipfExponent = 1.0

// fillCalm gives the remaining identities about budget requests with
// Zipf-like popularity, each capped far below the limit and pinned to a
// home PoP.
func (g *gen) fillCalm(budget int) {
	first, got := g.claim(g.c.Identities)
	g.mark(first, got, calm)
	if got == 0 || budget <= 0 {
		return
	}
	s := g.shape.zipf
	if s == 0 {
		s = zipfExponent
	}
	counts := zipfCounts(got, budget, int(calmCap*float64(g.c.Limit)*g.windows()), s)
	for i, n := range counts {
		g.emit(first+i, n, 0, g.dur, g.pinned())
	}
}

// zipfCounts splits budget over n identities by weight rank^-s, capping each
// at most, then hands out what is left one request per identity in rank
// order (within the cap) until the budget is spent or every identity is full.
func zipfCounts(n, budget, most int, s float64) []int {
	most = max(most, 1)
	var sum float64
	for r := 1; r <= n; r++ {
		sum += math.Pow(float64(r), -s)
	}
	counts := make([]int, n)
	left := budget
	for i := range counts {
		c := int(float64(budget) * math.Pow(float64(i+1), -s) / sum)
		counts[i] = min(c, most, left)
		left -= counts[i]
	}
	for left > 0 {
		moved := false
		for i := range counts {
			if left > 0 && counts[i] < most {
				counts[i]++
				left--
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return counts
}
