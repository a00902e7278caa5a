package budget

import "slices"

// Parking a denial a grant in flight may pay.
//
// A decision Call and a Sync batch whose item asks a grant for the same
// identity travel on different connections: Redis may run the batch
// first, grant this PoP the identity's last units, and deny the decision
// for them, while the decision's reply lands here first. The units are
// this PoP's by then, so the request is one the limit admits (pure Redis
// would have): denying it wrongly limited the client, and its RetryAfter
// counted this PoP's own grant as another's (a lone PoP at a limit of 1
// per minute was denied its first request, told 1 to 2 minutes, in about
// 3 of 100 fresh Limiters whose first Sync raced it).
//
// So, at a lone PoP (Config.PoPs 1), Complete parks such a denial
// (Decision.Parked) when this PoP's batch in flight for the identity's
// group asked it a grant: the request waits for Finish of that batch,
// which then pays it from what this PoP holds, as a reply that finds a grant here
// does (payHereLate), or leaves it denied (the batch failed, granted too
// little, or was a retry Redis had applied). Finish returns the Calls it
// resolved; their decision is Complete's again (a Call completed again
// returns its decision). A request waits at most for the batch's reply,
// which was already out; a driver whose caller leaves first takes the
// denial (Unpark). Parked only on a batch in flight, not on one to be
// sent again: a retried batch gets no grant.
//
// Not at several PoPs, measured: there the grant pays this PoP's next
// request (the units are not lost to the identity), while parking made
// every such denial wait for a batch: pop-sim's near-limit (8 PoPs) p50
// 8.4 -> 25.9 ms and p99 204.6 -> 251.5 ms, mixed's p99 192 -> 222 ms and
// its decision error 14.45% -> 15.19% (14.49% and p99 198 ms parking only
// identities not over twice their share), for 0.01% more of the quota.
// A lone PoP is exact to the unit, and its grant is all the budget there
// is: at one PoP on mixed, 2 more units served, decision error 11.65% ->
// 11.78%, p99 7.0 -> 7.1 ms, round trips saved 88.26% -> 88.21%.

// grantOut returns the batch in flight of e's group whose item for e asks
// a grant, or nil.
func (m *Machine) grantOut(e *entry) *Call {
	if !e.inBatch {
		return nil
	}
	if b := m.groups[m.group(int(e.bucket))].inflight; asksGrant(b, e.key) {
		return b
	}
	return nil
}

// park holds decision Call c, denied at now by Redis, for batch b's
// reply, until resolve or Unpark.
func (m *Machine) park(c, b *Call, now int64) {
	c.req.parked, c.req.parkedAt = true, now
	b.parked = append(b.parked, c)
	m.stats.Parked++
}

// resolve decides the Calls parked on batch b, whose outcome Finish has
// applied (ok: its grants are in the view), at the later of their
// denial's arrival and this PoP's clock: each is paid from what this PoP
// holds (payHereLate) or stays denied. It returns them.
func (m *Machine) resolve(b *Call, ok bool) []*Call {
	out := b.parked
	b.parked = nil
	for _, c := range out {
		m.unpark(c, ok)
	}
	return out
}

// unpark ends c's wait: paid from what this PoP holds when pay is set and
// that covers it, else denied as Redis said.
func (m *Machine) unpark(c *Call, pay bool) {
	p := c.req
	if !p.parked {
		return
	}
	p.parked = false
	if !pay {
		return
	}
	now := max(p.parkedAt, m.clockAt)
	if s, ok := m.payHereLate(now, p.e, p.n); ok {
		p.decided = Decision{Allowed: true, Source: s}
		m.countOwn(p.e, now, p.n)
		m.stats.Decisions[SrcRedis]--
		m.stats.Decisions[s]++
		m.stats.PaidLate++
		m.stats.PaidParked++
	}
}

// Unpark ends the wait of decision Call c, parked by Complete
// (Decision.Parked), for a driver whose caller will not wait for it: the
// request stays denied, as Redis answered, and nothing of it stays
// outstanding. It returns that Decision; for a Call not parked (never,
// or resolved by Finish) it changes nothing and returns Complete's
// Decision.
func (m *Machine) Unpark(c *Call) Decision {
	if c.req.parked {
		m.unpark(c, false)
		for g := range m.groups {
			if b := m.groups[g].inflight; b != nil {
				b.parked = slices.DeleteFunc(b.parked, func(o *Call) bool { return o == c })
			}
		}
	}
	return c.req.decided
}
