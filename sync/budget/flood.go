package budget

// floodFactor is how many times its limit an identity's demand must reach
// for flooding: an attacker's, not a client's near its limit.
const floodFactor = 2

// flooding reports whether e is contested and its demand reaches
// floodFactor times the limit a window: this PoP's demand rate (averaged
// over about a window by the Syncs) scaled by its part of what Redis
// counted of e (part: an identity this PoP serves a quarter of, four times
// this PoP's rate). A client near its limit served at this PoP alone
// reads its own rate, under twice the limit. The rate counts the units
// asked here and the part the units admitted, so a PoP denied more than
// the others (no grant while another PoP holds one) reads its part low
// and the identity's demand high: a client under its limit can then read
// as a flood at that PoP, and its requests there while a Call is out are
// denied; so can one served here alone at a window's start (part). The
// guards measured against that cost more than they mended
// (docs/budget.md, "Flooding identities").
//
// While a decision Call about a flooding identity is in flight from this
// PoP, decide denies its next requests the budget cannot cover here
// instead of sending each its own Call. Such an identity frees a unit now
// and then and sends many times more requests than that: the Call already
// out takes what Redis has free for this PoP, the other PoPs' Calls take
// theirs, and a second Call from here within the same round trip is
// almost always denied at Redis, a round trip and a script run spent to
// say so. It only denies, so the invariant is untouched; what it costs
// is quota, 0.1–0.2 point of the attackers' (below). On pop-sim's
// mixed, 37% of the decision Calls went out while another about the same
// identity was in flight from the same PoP (92% at a limit of 1000); with
// the rule (scripts/budget-lines.sh, 22 lines) round trips saved went
// 71.4 → 73.8% on mixed, 70.6 → 76.3% on spread-attack, 80.9 → 86.8% on
// pinned (62.8 → 77.7% on mixed at a limit of 1000), attackers were
// served 0.995–0.997 of pure Redis' quota (0.997–0.998 before; the small
// limit's 1.031 → 1.018), every other class within 0.005 of before, and
// the worst identity stayed within +0.01 of pure Redis' on every line. At
// three times the limit: 0.4–0.6 point fewer round trips saved and the
// bursts' decision error 0.33 point higher. docs/budget.md, "Flooding
// identities", has the figures line by line.
func (m *Machine) flooding(e *entry) bool {
	if !m.contested(e) {
		return false
	}
	mine, counted := m.part(e)
	if mine <= 0 || counted <= 0 {
		return false
	}
	return e.rate*float64(m.w)*float64(counted) >= floodFactor*float64(m.cfg.Limit.Max)*float64(mine)
}
