package budget

import (
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// What the core.Limiter methods need of the Machine: a Decision told in
// core's terms (Describe), a peek (Peek, PeekDone) and a reset (Reset,
// ResetDone: reset.go).
// None of it is on the decision path: Machine.decide decides alone.

// Describe tells decision d on n units of key at now in core's terms, from
// the view as it is after d. Remaining and ResetAfter are core's, on the
// view's counts of key (viewCounts: Redis' last count plus what this PoP
// admitted that no reply has counted; units other PoPs admitted since
// Redis' last word are not in them). Budget Redis reserves for the PoPs'
// free credit is not spent, so it is not taken off Remaining. RetryAfter
// is, for a denial, the latest of Redis' word on the last request it
// denied here (the time its units would fit, kept for later denials), the
// view's wait (deny cache, known full) and, unless Redis denied it and
// said when, core's on the view's counts, at least 1 ms (Redis' words
// count from when this PoP sent the call, so a skew between its clock and
// Redis' does not move them; core's on the view's counts reads this PoP's
// clock against Redis' windows); a FailClosed denial while Redis is down waits at least a
// Sync interval (the earliest a Sync can find Redis back). Staleness is
// the age of Redis' last reply about key for a decision made here.
func (m *Machine) Describe(now int64, key string, n int64, d Decision) core.Decision {
	out := core.Decision{Allowed: d.Allowed, Limit: m.cfg.Limit.Max, Source: coreSource(d.Source, m.cfg.FailClosed)}
	e := m.view[key]
	x := m.window(now)
	cur, prev := m.lightCounts(key, x)
	if e != nil {
		cur, prev = m.viewCounts(e, x)
	}
	elapsed := now - x*m.w
	out.Remaining = core.SlidingRemaining(core.SlidingEstimate(cur, prev, elapsed, m.w), m.cfg.Limit.Max)
	out.ResetAfter = ms(core.SlidingResetMillis(cur, prev, elapsed, m.w))
	if !d.Allowed {
		var wait int64
		if d.Source != SrcRedis || e == nil || e.retryAt == 0 {
			wait = core.SlidingRetryMillis(cur, prev, elapsed, m.w, m.cfg.Limit.Max, n)
		}
		if e != nil {
			// the waits run on the PoP's clock: Redis' denial of this
			// request set them from its call's anchored send, so they are
			// read from it (anchor.go); any other denial is read from now,
			// which sentAt cannot tell from a stamp ahead when the last
			// Tick is late
			from := now
			if d.Source == SrcRedis {
				from = m.sentAt(now)
			}
			wait = max(wait, max(e.denyUntil, e.fullUntil, e.retryAt)-from)
		}
		if d.Source == SrcFallback && m.cfg.FailClosed {
			// denied because Redis is down: no verdict changes before the
			// next Sync finds it back
			wait = max(wait, m.cfg.SyncInterval.Milliseconds())
		}
		out.RetryAfter = ms(max(1, wait))
	}
	if e != nil && d.Source != SrcRedis && e.heard > 0 && now > e.heard {
		out.Staleness = ms(now - e.heard)
	}
	return out
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// coreSource maps a Source to core's.
func coreSource(s Source, failClosed bool) core.Source {
	switch s {
	case SrcRedis:
		return core.SourceRedis
	case SrcDenyCache:
		return core.SourceCachedDeny
	case SrcFallback:
		if failClosed {
			return core.SourceFailClosed // denied: nothing decided
		}
		// decided on the view and counted (reported once Redis is back):
		// a counted decision, not a fail-open guess
	}
	return core.SourceLocal
}

// lightCounts is the units key's light record admitted in window x and in
// the one before (0, 0 without a record).
func (m *Machine) lightCounts(key string, x int64) (cur, prev int64) {
	switch x {
	case m.lightX:
		if rec, ok := m.lights[0][key]; ok {
			return int64(rec.u), int64(rec.pu)
		}
		if rec, ok := m.lights[1][key]; ok {
			return 0, int64(rec.u)
		}
	case m.lightX + 1:
		if rec, ok := m.lights[0][key]; ok {
			return 0, int64(rec.u)
		}
	case m.lightX - 1:
		// the tier rolled a window past x (a request stamped early): x's
		// free unit is in the record of lightX−1, or in the pu of one that
		// came since
		if rec, ok := m.lights[1][key]; ok {
			return int64(rec.u), int64(rec.pu)
		}
		if rec, ok := m.lights[0][key]; ok {
			return int64(rec.pu), 0
		}
	}
	return 0, 0
}

// held is the budget this PoP can spend of e in window x unasked: its live
// grant balance and its free slot of x when unused.
func (m *Machine) held(e *entry, x int64) int64 {
	var h int64
	for _, g := range e.grants {
		if g.bal > 0 && (g.win == x || g.win == x-1) {
			h += g.bal
		}
	}
	if x > e.claimed {
		h += m.cfg.FreeCredit
	}
	return h
}

// peekOnView is the decision n units of key would get on the view as it
// is, Redis not asked, as AllowN decides them while Redis is down: paid
// from what this PoP holds (its grant balance, its free slot while
// leased: paysHere), else the fail mode's (FailClosed denies; else
// allowed while the view's Remaining covers n and, for an identity with
// a full entry, this PoP's outage share does: fallbackAdmits).
func (m *Machine) peekOnView(now int64, key string, n int64) core.Decision {
	e := m.view[key]
	if e != nil && m.paysHere(e, m.window(now), n) {
		d := m.Describe(now, key, n, Decision{Allowed: true, Source: SrcGrant})
		d.RetryAfter = 0
		return d
	}
	d := m.Describe(now, key, n, Decision{Source: SrcFallback})
	d.Allowed = !m.cfg.FailClosed && d.Remaining >= n && (e == nil || m.fallbackAdmits(now, e, n))
	if d.Allowed {
		d.RetryAfter = 0
	}
	return d
}

// Peek is PeekN of one unit.
func (m *Machine) Peek(now int64, key string) (core.Decision, *Call) { return m.PeekN(now, key, 1) }

// PeekN returns the Call that reads Redis' word on n units of key at now
// without counting them (an Item peeking at the units this PoP would ask
// Redis for: n less what it holds, at least one), or, when the deny cache
// already denies key, the Decision and no Call. The Call carries this
// PoP's unreported spends of key, as a decision Call would, under the
// decisions' report sequence (reports.go: applied at most once), so
// Redis weighs them as AllowN's Call would have it weigh them, not as
// budget still granted; the script writes nothing else for it. The
// caller runs the Call (Exec) and hands its outcome to PeekDone, or,
// when it is not run or its caller left, to PeekDone with the error (its
// report then goes again with the next Sync). n is checked by the caller
// (Limiter.PeekN: 1 to Limit.Max). While Redis is down (Down) it asks
// nothing: the view's answer, as a failed peek's (PeekDone), as AllowN
// decides on the view then without a call.
func (m *Machine) PeekN(now int64, key string, n int64) (core.Decision, *Call) {
	e := m.view[key]
	if e != nil && now < e.denyUntil {
		return m.Describe(now, key, n, Decision{Source: SrcDenyCache}), nil
	}
	if m.down {
		return m.peekOnView(now, key, n), nil
	}
	x := m.window(now)
	ask := n
	if e != nil {
		ask -= m.held(e, x)
	}
	b := m.bucket(key)
	c := &Call{Group: m.group(b), Now: now, Items: []Item{{Key: key, Bucket: b, Peek: max(1, ask)}}, hotWin: -1, peekN: n}
	if e != nil && len(e.pending()) > 0 && m.reports.room() && !m.ahead(x) {
		c.Items[0].Ops = e.takeOps()
		m.reports.take(c)
	}
	return core.Decision{}, c
}

// PeekDone applies peek Call c's outcome at now and returns the decision
// its n units (PeekN) would get: allowed when Redis' headroom and what
// this PoP holds (a grant, its unused free slot, and its reserved slot of
// the next window, which its next decision Call gives up, while nothing of
// the previous window weighs) cover them, or when Redis would decide the
// part this PoP would ask it for (what it holds paying the rest, as in
// Request); Remaining and ResetAfter on Redis' counts plus this PoP's
// unreported units, RetryAfter Redis' wait for that part, at least the
// view's deny and known-full waits (Describe's when Redis gave none). On
// err it describes the view as it is, with the fail mode's Source, and
// puts the Machine down (Down) as a failed decision Call does, unless err
// is a *RedirectError or a *CanceledError (no outage).
func (m *Machine) PeekDone(now int64, c *Call, r *Result, err error) core.Decision {
	return m.peekDone(now, c, r, err, true)
}

// peekDone is PeekDone; a failed call puts the Machine down only when
// failed says the failure is Redis' (not a deadline that passed before
// the call went out).
func (m *Machine) peekDone(now int64, c *Call, r *Result, err error, failed bool) core.Decision {
	key := c.Items[0].Key
	n := max(1, c.peekN)
	if c.guard != "" {
		// its report goes again when no reply came (applied at most once)
		m.reports.done(c, err != nil || r == nil)
	}
	e := m.view[key]
	x := m.window(now)
	if err != nil || r == nil {
		m.down = m.down || (failed && !misrouted(err) && !left(err))
		return m.peekOnView(now, key, n)
	}
	it := r.Items[0]
	// What this PoP's slots add: it spends them (with a free-credit
	// lease), or its decision Call gives them up unused, which frees the
	// units the caller's own term reserved for them. (Without a lease,
	// where the announced PoPs' term is the larger, giving them up frees
	// less: the room may be overstated by up to 2c.)
	room := it.Headroom
	if it.CPrev == 0 {
		room += m.cfg.FreeCredit // the next window's slot, given up at the next decision (when new here or contested: a settled identity far from its limit keeps it, overstating a room of Max/4 or more by c)
	}
	if e != nil {
		m.absorb(e, m.sentAt(c.Now), r, it) // the PoP's clock, not a stamp ahead of it (anchor.go)
		room += m.held(e, x)
		if x+1 <= e.claimed && it.CPrev == 0 {
			room -= m.cfg.FreeCredit // given up already
		}
	} else if through, _, ok := m.renouncedThrough(key, x); ok {
		// its slots are given up through a later window: none to spend
		if x+1 <= through && it.CPrev == 0 {
			room -= m.cfg.FreeCredit // the next window's too
		}
	} else if cur, _ := m.lightCounts(key, x); cur == 0 && x > m.forgot {
		room += m.cfg.FreeCredit
	}
	d := m.Describe(now, key, n, Decision{Allowed: room >= n || it.Allowed == 1, Source: SrcRedis})
	if e == nil && r.Window == x {
		cur, prev := m.lightCounts(key, x)
		cur, prev = cur+it.CW, prev+it.CPrev
		elapsed := now - x*m.w
		d.Remaining = core.SlidingRemaining(core.SlidingEstimate(cur, prev, elapsed, m.w), m.cfg.Limit.Max)
		d.ResetAfter = ms(core.SlidingResetMillis(cur, prev, elapsed, m.w))
	}
	if !d.Allowed {
		// Redis' wait for the part this PoP would ask it for, as AllowN's
		// denial at Redis reports it (not core's for all n on the view:
		// what this PoP holds pays the rest), and at least the view's own
		// waits; the view's alone when Redis said nothing of when
		wait := d.RetryAfter.Milliseconds()
		if it.PeekWait > 0 {
			wait = it.PeekWait
			if e != nil {
				wait = max(wait, max(e.denyUntil, e.fullUntil)-m.sentAt(now))
			}
		}
		d.RetryAfter = ms(max(1, wait))
	}
	return d
}
