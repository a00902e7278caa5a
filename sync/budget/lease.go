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
// is set too low is reserved for as it spends. The caller's own
// c × (PoPs − claims) is kept beside it (the larger counts), so PoPs of
// earlier versions, which spend without announcing, stay covered when
// every PoP is configured alike.
//
// The first count. Decisions Redis made in a window before it counted
// this PoP there did not reserve for it, unless their callers' own
// configuration did. So Redis records, per window, the least PoPs and
// free credit of the callers whose decisions and grants read its
// reservation, and a lease starts (Result.LeasedFrom) after the last
// newly counted window whose record reserved for fewer spenders than it
// now counts, or for less credit. Where every PoP is configured alike a
// new PoP's lease starts at once; a PoP configured apart, or a restarted
// one while its predecessor is still counted (three windows) and the PoPs
// counted fill the least PoPs recorded, spends no free credit in a window
// decided without it, and asks Redis instead. A renewal that comes late
// moves the first window past the one it newly counts, and leaseTo keeps
// the windows of the lease before it. TestFirstCountWaitsWhereUnreserved,
// TestLateRenewalKeepsCountedWindows.
//
// A new process spends no free credit until its first reply lands: its
// first requests ask Redis (Start runs a Sync at once). Tick renews a
// lease due within three windows with an empty batch when the group has
// nothing else to send, so an idle PoP makes one call per group a window.
// Claims need no lease: a Call that carries them also announces when its
// group's lease is short, and the script counts the announcement first.

// credit is the free credit this PoP may spend in window x of an identity
// of group g: Config.FreeCredit while g's lease covers x (from its first
// window through its last, or the windows of the lease before it that a
// renewal's later first window kept: leaseTo), else 0. m.lease and
// m.leaseFrom, the windows every group's lease covers, answer first
// without g's (on a Redis Cluster a master that cannot be reached stops
// the free credit of its groups' identities only).
func (m *Machine) credit(x int64, g int) int64 {
	gs := &m.groups[g]
	if (x <= m.lease && x >= m.leaseFrom) || (x <= gs.leased && x >= gs.leasedFrom) || (x <= gs.keptTo && x >= gs.keptFrom) {
		return m.cfg.FreeCredit
	}
	return 0
}

// creditOf is credit for key, whose group is worked out only when the
// leases of every group do not answer.
func (m *Machine) creditOf(x int64, key string) int64 {
	if x <= m.lease && x >= m.leaseFrom {
		return m.cfg.FreeCredit
	}
	g := 0
	if len(m.groups) > 1 {
		g = m.group(m.bucket(key))
	}
	return m.credit(x, g)
}

// announce makes c, a call to c.Group planned in window x, renew that
// group's lease when it does not reach x+3, and tells the script how far
// this PoP's checks are recorded (a call of Redis' window w whose checks
// are recorded through w+2 records none: one HMGET of four fields, not
// eight). Three windows ahead: every
// check that reads R_y (E2 in window y−2, E1 in y−1, E in y) then runs
// after this PoP was counted in y, so in steady state a misconfigured
// PoP is reserved for before it can spend (announced two ahead, a grant
// made in y−2 before the announcement missed it in E2). x is this PoP's
// window and the script runs on Redis' (w): it counts an announcement
// through w+4 at most, so a call does a bounded amount of work whatever
// the skew, and its reply's Leased is the last window it counted, never
// more (leaseTo takes no window Redis did not reserve for). A PoP up to a
// window ahead is counted through its x+3 as before; one two to four
// ahead spends free credit through w+4 and finds its lease due at every
// call (a renewal each Tick with nothing else to send); one further ahead
// spends none. TestAnnounceAheadCountsBoundedWindows.
func (m *Machine) announce(c *Call, x int64) {
	// a request stamped ahead of the Ticks announces nothing: Redis would
	// count this PoP from that window on and skip the windows between
	if m.leaseDue(c.Group, x) && !m.ahead(x) {
		c.announce = x + 3
	}
	c.recorded = m.groups[c.Group].checkedTo
}

// leaseDue reports whether group g's lease must be renewed in window x.
func (m *Machine) leaseDue(g int, x int64) bool {
	return m.cfg.FreeCredit > 0 && m.groups[g].leased < x+3
}

// acknowledged records what Redis' reply r to c says of this PoP on c's
// group: its lease, and, when c asked a decision or a grant, that Redis
// has recorded its checks through r.Window+2.
func (m *Machine) acknowledged(c *Call, r *Result) {
	m.leaseTo(c.Group, r.LeasedFrom, r.Leased)
	for _, it := range c.Items {
		if it.N > 0 || it.Want > 0 {
			gs := &m.groups[c.Group]
			gs.checkedTo = max(gs.checkedTo, r.Window+2)
			return
		}
	}
}

// leaseTo records a reply's lease for group g: windows from through
// through (Result.LeasedFrom, Result.Leased). A reply whose lease ends no
// later than the one held is older news and changes nothing. When Redis
// moves the first window on (a renewal, late or missed once, newly
// counted a window a check had read without reserving for this PoP), the
// windows of the lease held before it stay: Redis counted this PoP there
// before any check read them (kept; a later move keeps the then current
// lease's instead, an empty one keeps the kept).
func (m *Machine) leaseTo(g int, from, through int64) {
	gs := &m.groups[g]
	if through <= gs.leased {
		return
	}
	if from > gs.leasedFrom && gs.leased >= gs.leasedFrom {
		gs.keptFrom, gs.keptTo = gs.leasedFrom, min(gs.leased, from-1)
	}
	gs.leased, gs.leasedFrom = through, from
	m.lease, m.leaseFrom = math.MaxInt64, math.MinInt64
	for i := range m.groups {
		m.lease = min(m.lease, m.groups[i].leased)
		m.leaseFrom = max(m.leaseFrom, m.groups[i].leasedFrom)
	}
}
