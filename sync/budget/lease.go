package budget

import "math"

// Who may spend free credit. Redis reserves, of every identity it decides,
// the free credit PoPs may still spend unseen (R_x in docs/budget.md). It
// does not trust the caller's Config for it: a PoP spends free credit in
// window x only once Redis has counted it among x's spenders. Every call
// to a group whose lease does not reach three windows ahead announces this
// PoP through x+3 (Call.announce); the script counts each incarnation once
// per window and keeps the largest credit announced, and its reply says
// how far this incarnation's announcements reach (Result.Leased): this
// PoP's lease on that group. R_x is then at least the largest announced
// credit times the announced PoPs that have not claimed their slot,
// whatever any PoP's Config says: a PoP added before the others' Config
// counts it, a PoP whose FreeCredit differs, or a deployment whose PoPs
// is set too low is reserved for as it spends, from the third window
// after Redis first counts it. Before that (a new process, or a lease
// that lapsed), decisions Redis made in the window or the two before
// without it stand: up to c units per identity and window over, in at
// most three windows, as a restarted PoP already may. The caller's own
// c × (PoPs − claims) is kept beside it (the larger counts), so PoPs of
// earlier versions, which spend without announcing, stay covered when
// every PoP is configured alike.
//
// A new process spends no free credit until its first reply lands: its
// first requests ask Redis (Start runs a Sync at once). Tick renews a
// lease due within three windows with an empty batch when the group has
// nothing else to send, so an idle PoP makes one call per group a window.
// Claims need no lease: a Call that carries them also announces when its
// group's lease is short, and the script counts the announcement first.

// credit is the free credit this PoP may spend in window x of an identity
// of group g: Config.FreeCredit while g's lease covers x, else 0. m.lease,
// the least of the groups' leases, answers first without g's (on a Redis
// Cluster a master that cannot be reached stops the free credit of its
// groups' identities only).
func (m *Machine) credit(x int64, g int) int64 {
	if x <= m.lease || x <= m.groups[g].leased {
		return m.cfg.FreeCredit
	}
	return 0
}

// creditOf is credit for key, whose group is worked out only when the
// least lease does not answer.
func (m *Machine) creditOf(x int64, key string) int64 {
	if x <= m.lease {
		return m.cfg.FreeCredit
	}
	if len(m.groups) == 1 {
		return 0
	}
	return m.credit(x, m.group(m.bucket(key)))
}

// announce makes c, a call to c.Group planned in window x, renew that
// group's lease when it does not reach x+3. Three windows ahead: every
// check that reads R_y (E2 in window y−2, E1 in y−1, E in y) then runs
// after this PoP was counted in y, so in steady state a misconfigured
// PoP is reserved for before it can spend (announced two ahead, a grant
// made in y−2 before the announcement missed it in E2).
func (m *Machine) announce(c *Call, x int64) {
	if m.leaseDue(c.Group, x) {
		c.announce = x + 3
	}
}

// leaseDue reports whether group g's lease must be renewed in window x.
func (m *Machine) leaseDue(g int, x int64) bool {
	return m.cfg.FreeCredit > 0 && m.groups[g].leased < x+3
}

// leaseTo records a reply's Leased for group g.
func (m *Machine) leaseTo(g int, through int64) {
	if through <= m.groups[g].leased {
		return
	}
	m.groups[g].leased = through
	m.lease = math.MaxInt64
	for i := range m.groups {
		m.lease = min(m.lease, m.groups[i].leased)
	}
}
