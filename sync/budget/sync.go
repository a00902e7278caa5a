package budget

import (
	"math"
	"slices"
)

// Tick plans the Sync at now: per group, the batch whose reply never came
// (sent again, same sequence number) or a new batch of every identity with
// something to report or to ask, unless that group's batch is in flight.
// While Redis is down and nothing else goes out, an empty batch probes it.
// A decision Call's report whose reply never came goes out first, under
// its own number (Complete). The caller runs each Call (Exec) and hands
// its outcome to Finish.
//
// Tick's work follows activity, not the view's size: it plans the
// identities asked about since the last Tick (and contested ones holding
// a balance or ops, which return or report every Sync), plus a sweep of
// the view that visits each identity about once a window (to return a
// quiet balance, let expired grants go and forget idle identities).
func (m *Machine) Tick(now int64) []*Call {
	x := m.window(now)
	m.tickX = max(m.tickX, x)
	m.Clock(now)
	m.rollLight(x) // light records two windows old go
	m.rollRenounced(x)
	batches := make([]*Call, len(m.groups))
	todo := m.dirty
	m.dirty = nil
	for _, e := range todo {
		e.queued = false
	}
	visit := func(e *entry) {
		if e.queued {
			return // planned at the next Tick
		}
		m.stats.Visits++
		g := m.group(int(e.bucket))
		gs := &m.groups[g]
		if e.inBatch || gs.inflight != nil || gs.retry != nil {
			if m.pressing(e) {
				m.mark(e) // its batch is out: plan it at the next Tick
			}
			return
		}
		it, ok := m.plan(e, x, now)
		switch {
		case !ok && m.idle(e, now, x):
			m.retire(e)
			return
		case m.contested(e) && (len(e.pending()) > 0 || e.grants[0].bal > 0 || e.grants[1].bal > 0):
			m.mark(e) // a contested balance returns, and its spends report, every Sync
		}
		if !ok {
			return
		}
		if batches[g] == nil {
			batches[g] = &Call{Group: g, Now: now}
		}
		batches[g].Items = append(batches[g].Items, it)
		e.inBatch = true
	}
	for _, e := range todo {
		if m.view[e.key] == e {
			visit(e)
		}
	}
	// The sweep: len(all) × SyncInterval / window entries a Tick, at least one.
	n := min(len(m.all), max(1, int((int64(len(m.all))*m.cfg.SyncInterval.Milliseconds()+m.w-1)/m.w)))
	for range n {
		if m.sweep >= len(m.all) {
			m.sweep = 0
		}
		e := m.all[m.sweep]
		m.sweep++
		visit(e)
		if m.sweep > 0 && m.sweep <= len(m.all) && m.all[m.sweep-1] != e {
			m.sweep-- // e was dropped: another entry took its slot
		}
	}
	m.planClaims(batches, x, now)
	var out []*Call
	for _, c := range m.reports.resend() {
		c.Now = now // sent again: what its reply sets counts from now (absorb)
		out = append(out, c)
	}
	for g := range m.groups {
		gs := &m.groups[g]
		switch {
		case gs.inflight != nil:
			continue
		case gs.retry != nil:
			gs.inflight, gs.retry = gs.retry, nil
			gs.inflight.Now = now // sent again: what its reply sets counts from now (absorb)
		case batches[g] != nil:
			gs.seq++
			batches[g].Seq = gs.seq
			slices.SortFunc(batches[g].Items, func(a, b Item) int { return cmpString(a.Key, b.Key) })
			gs.inflight = batches[g]
		case m.down && len(out) == 0 && g == len(m.groups)-1:
			gs.seq++ // nothing to send while Redis is down: an empty batch probes it
			gs.inflight = &Call{Group: g, Seq: gs.seq, Now: now}
		case m.leaseDue(g, x):
			gs.seq++ // nothing to send, but the free-credit lease is due (lease.go)
			gs.inflight = &Call{Group: g, Seq: gs.seq, Now: now}
		default:
			continue
		}
		m.announce(gs.inflight, x) // a batch sent again renews from this window too
		gs.inflight.hotWin, gs.inflight.hotCur = gs.hotWin, gs.hotCur
		out = append(out, gs.inflight)
	}
	m.count(out...) // one round trip: the driver sends them in one pipeline (ExecAll)
	return out
}

// plan builds e's item of a Sync at now, window x: its returns (every
// balance once it is quiet), its top-up, and, when it sends an item, its
// unreported ops and claims. Far from its limit, an identity's spends are
// not worth a Redis call of their own (unreported, they stay inside G or R
// at Redis): they wait for an item sent for another reason. ok is false
// when e has nothing to send.
func (m *Machine) plan(e *entry, x, now int64) (Item, bool) {
	dt := float64(m.cfg.SyncInterval.Milliseconds())
	if e.lastPlan != 0 && now > e.lastPlan {
		dt = float64(now - e.lastPlan)
	}
	a := min(1, dt/float64(m.w))
	e.rate += a * (float64(e.demand)/dt - e.rate)
	e.lastPlan = now
	for i := range e.grants {
		if e.grants[i].win < x-1 {
			e.grants[i] = grantSlot{} // expired with its window: Redis drops it too
		}
	}
	if e.ops != nil {
		*e.ops = slices.DeleteFunc(*e.ops, func(o Op) bool { return o.X < x-1 && o.GW < x-2 }) // no estimate reads them
		if len(*e.ops) == 0 {
			e.ops = nil
		}
	}
	contested := m.contested(e)
	// Without demand since the last Sync, keep what the demand rate
	// expects over the grant's horizon (a window; the Sync horizon when
	// contested) and return the rest.
	quiet := e.demand == 0
	returns := false
	if quiet {
		keep := e.rate * float64(m.w)
		if contested {
			keep = e.rate * m.horizon()
		}
		k := int64(0)
		switch {
		case e.rate*float64(m.w) < 0.5:
			// the demand is gone: return everything, once
		case !contested:
			// far from the limit a held balance costs no one: no call
			// to return it (it expires with its window)
			k = math.MaxInt64
		default:
			k = max(1, int64(math.Ceil(keep)))
		}
		order := []int{0, 1}
		if e.grants[1].win > e.grants[0].win {
			order = []int{1, 0} // keep the newer grant, which lasts longer
		}
		for _, i := range order {
			g := &e.grants[i]
			u := min(g.bal, k)
			k -= u
			if back := g.bal - u; back > 0 {
				e.addOp(Op{X: -1, GW: g.win, U: back})
				g.bal = u
				returns = true
			}
		}
	}
	var want int64
	if !quiet && now >= e.fullUntil {
		// NoWait buys latency with Redis work: a calm identity's top-up
		// follows the demand since the last Sync, so its next unit is in
		// hand before it is asked for
		want = m.topUp(e, x, m.cfg.NoWait)
	}
	e.demand = 0
	if want == 0 && !returns && !e.renounce && !(contested && len(e.pending()) > 0) {
		return Item{}, false
	}
	e.renounce = false
	it := Item{Key: e.key, Bucket: int(e.bucket), Want: want, Floor: m.grantFloor(e), Divisor: m.divisor(e), Ops: e.takeOps(), Claims: m.claims(e, x, false)}
	return it, true
}

// pressing reports whether e has something a Sync must send soon: demand,
// unreported ops, slots to give up, or, when contested, a balance to
// return.
func (m *Machine) pressing(e *entry) bool {
	return e.demand > 0 || len(e.pending()) > 0 || e.renounce ||
		(m.contested(e) && (e.grants[0].bal > 0 || e.grants[1].bal > 0))
}

// idle reports whether e holds nothing worth keeping at now in window x:
// nothing of it reaches past window x−1, where it may have consumed its
// slot (retire keeps that).
func (m *Machine) idle(e *entry, now, x int64) bool {
	return e.asking == 0 && e.demand == 0 && e.rate*float64(m.w) < 0.01 && e.ops == nil && e.claimed < x &&
		e.grants[0].bal == 0 && e.grants[1].bal == 0 && now >= e.denyUntil && e.own.Index < x-1
}

// Finish applies the outcome of Sync batch c: on success each item's grant
// and bounds; on error the batch is kept and sent again by the next Tick
// (same sequence number, so Redis applies it at most once), and Redis
// counts as down unless the error is a *RedirectError (a configuration
// error: the other groups' calls still go) or a *CanceledError (the
// Sync's caller left). It returns the decision Calls parked on c
// (Decision.Parked), now decided: paid from the grants c brought, or
// denied as Redis said (park.go); Complete returns each one's Decision.
func (m *Machine) Finish(c *Call, r *Result, err error) []*Call {
	if c.redo {
		// a decision's report sent again: applied now, or found applied
		ok := err == nil && r != nil
		m.reports.resent(c, ok)
		if !ok {
			m.down = m.down || !(misrouted(err) || left(err)) // a redirection, a caller gone: no outage
			return nil
		}
		m.recovered(m.landedAt(c))
		m.acknowledged(c, r) // it carried the original's announcement
		if e := m.view[c.Items[0].Key]; e != nil {
			m.unapplied(e, c.Items[0].Claims, r) // claims past Redis' window + 2 go again (unapplied.go)
		}
		return nil
	}
	gs := &m.groups[c.Group]
	if gs.inflight != c {
		return nil // a reply already applied (or of a batch this Machine no longer waits on)
	}
	gs.inflight = nil
	if err != nil || r == nil {
		m.down = m.down || !(misrouted(err) || left(err)) // a redirection, a caller gone: no outage
		gs.retry = c
		return m.resolve(c, false) // no grant came: the parked denials stand
	}
	m.recovered(m.landedAt(c))
	m.acknowledged(c, r)
	m.redis.note(c.Now, r.Now, 64*max(1, m.cfg.SyncInterval.Milliseconds()))
	x := m.window(r.Now)
	if r.Window > gs.hotWin || (r.Window == gs.hotWin && r.HotCursor > gs.hotCur) {
		gs.hotWin, gs.hotCur = r.Window, r.HotCursor
	}
	// Redis lists the hot identities in its set's order: apply them in the
	// keys' order, so the view (and the sweep's walk of it) does not
	// depend on it.
	slices.SortFunc(r.Hot, func(a, b HotKey) int { return cmpString(a.Key, b.Key) })
	for _, h := range r.Hot {
		if m.view[h.Key] == nil && !has(m.lights[0], h.Key) && !has(m.lights[1], h.Key) {
			m.renounce(h, x) // nothing else of it here: a record, not a full entry
			continue
		}
		e := m.entry(h.Key)
		if e.sentClaims < x+giveUpAhead {
			e.claimed = max(e.claimed, x+giveUpAhead) // no free credit of it here through x+giveUpAhead
			e.renounce = true
			m.mark(e)
		}
	}
	for i, it := range c.Items {
		e := m.view[it.Key]
		if e == nil {
			m.unappliedRecord(it.Key, it.Bucket, it.Claims, r) // a renounced record's (unapplied.go)
			continue
		}
		e.inBatch = false
		m.unapplied(e, it.Claims, r) // claims past Redis' window + 2 go again (unapplied.go)
		m.absorb(e, c.Now, r, r.Items[i])
	}
	return m.resolve(c, true)
}

// landedAt is when batch c's reply came on this PoP's clock: the latest
// of its send time and the driver's reading of its clock (Clock), which
// Limiter's Sync and pop-sim take as the replies arrive. A batch can wait
// through an outage (a stalled Redis runs it when it resumes): from its
// send time the grace after the outage had ended before its reply came
// (TestHungBatchRecoveryKeepsTheGrace).
func (m *Machine) landedAt(c *Call) int64 { return max(c.Now, m.clockAt) }

// recovered notes a successful call at now (this PoP's clock). After an
// outage, contested identities stay on the fallback (their share of the
// view) for a Sync interval and two round trips more: every PoP's batch
// reporting its outage admissions lands within that, and a contested
// identity's first decisions at Redis raced them (an attacker served at
// all 8 PoPs got 29 units in the second Redis came back; mixed with a
// 5 s outage 1.22× the limit, 1.18× with the grace). Under FailClosed
// there is no fallback to stay on.
func (m *Machine) recovered(now int64) {
	if m.down {
		m.graceUntil = now + (m.cfg.SyncInterval + 2*m.cfg.RTT).Milliseconds()
	}
	m.down = false
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
