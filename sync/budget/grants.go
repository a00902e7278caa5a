package budget

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"

	"github.com/edgelimit/edgelimit/core"
)

// claims returns the free-slot claims an item about e sent in window x
// carries: every slot from x−1 on consumed here and not yet claimed, and,
// when e is contested or hot or giveUpNext is set (a decision Call about
// an identity new here), every slot through x+giveUpAhead (the
// current and next two windows' slots are given up); it marks them
// consumed and sent. Far
// from the limit a reserved slot costs no one, so a calm identity keeps
// its free credit in every window. A slot
// free credit used is not among them: the op reporting the use claims it,
// so Redis never sees the claim without the units.
func (m *Machine) claims(e *entry, x int64, giveUpNext bool) []int64 {
	if m.cfg.FreeCredit == 0 {
		return nil // no free credit: no slots to claim
	}
	through := e.claimed
	if giveUpNext || m.contested(e) || e.renounce {
		through = max(through, x+giveUpAhead)
	}
	// Redis counts a window's claims against the PoPs it counted as that
	// window's spenders (lease.go): every Call carrying claims of windows
	// up to x+2 is one whose group's lease reaches x+2 (it is renewed
	// whenever it falls short of x+3), or that announces it, and the
	// script applies the announcement first. Slots consumed further
	// ahead (a naming in a later Redis window, the Call's request stamped
	// behind) are claimed only as far as the group's lease reaches; the
	// rest stay consumed here and go with a later item.
	send := min(through, max(x+giveUpAhead, m.groups[m.group(int(e.bucket))].leased))
	var out []int64
	for y := max(e.sentClaims+1, x-1, m.forgot+1); y <= send; y++ {
		if !e.used(y) {
			out = append(out, y)
		}
	}
	e.claimed, e.sentClaims = through, max(e.sentClaims, send)
	if e.sentClaims < through {
		e.renounce = true // the next Sync sends the rest
		m.mark(e)
	}
	return out
}

// contested reports whether Redis last said e has little headroom (under a
// quarter of the limit): grants then cover a short horizon and an idle
// PoP returns its balance at once, so the headroom follows demand.
func (m *Machine) contested(e *entry) bool {
	return e.headroom >= 0 && e.headroom < m.cfg.Limit.Max/4
}

// horizon is the ms a contested identity's grant should last: four Sync
// intervals plus RTTs (on pop-sim's mixed scenario, under an earlier
// policy that denied here every contested request no grant covered,
// near-limit clients were served 96.4% of their quota with four, 94.8%
// with two, 91.7% with one: a shorter grant runs out before the next one
// lands).
func (m *Machine) horizon() float64 {
	return 4 * float64((m.cfg.SyncInterval + m.cfg.RTT).Milliseconds())
}

// settled reports whether e's demand here is old enough at now for a
// decision Call to ask a top-up: a Sync interval and a round trip since
// this PoP first saw it (e.born; 150 ms at the defaults), the time
// a Sync's top-up takes to land. A burst's grants land after it ends and
// hold budget where no request comes, so a new identity's requests are
// decided at Redis until then (pop-sim's flash crowd over 100 ms: 89.4% of
// the reference served, 95.0% with the wait; round trips saved on mixed
// 71.5% -> 71.1%, on the 1 s crowd 71.9% -> 67.5%). Syncs top it up
// meanwhile.
func (m *Machine) settled(e *entry, now int64) bool {
	return now-e.born >= (m.cfg.SyncInterval + m.cfg.RTT).Milliseconds()
}

// grantFloor is the least headroom at which Redis grants e's top-up (its
// item's Floor, the script's gmin): P under the default policy, so a
// saturated identity's last units stay at Redis and go to the requests
// where they come (a one-unit grant per PoP with demand held about P units
// Redis counted while they waited for that PoP's next request, and denied
// requests elsewhere meanwhile: near-limit clients were served 96.6% of
// pure Redis' quota); 1 when every unit Redis counted of e in its last
// window came from this PoP (a grant here denies no request elsewhere:
// pinned identities saved 78.9% of round trips with it, 71.2% without),
// and 1 under NoWait, whose PoPs deny here what no grant covers, so a
// grant is worth its wait.
func (m *Machine) grantFloor(e *entry) int64 {
	if m.cfg.NoWait || m.sole(e) {
		return 1
	}
	return int64(m.cfg.PoPs)
}

// owned reports whether this PoP owns e: Redis called it contested, and
// every unit Redis counted of it in its last window and the one before
// (C of each, at least one unit in each) is one this PoP reported. Its
// top-up is then granted up to the whole headroom (divisor 1) rather
// than a share of it: no other PoP's request is denied by budget held
// here, and a share sized for P PoPs starved the one PoP that has the
// identity (pinned's near-limit clients waited a round trip for 14,206
// requests of 50,000, 7,268 owned; under NoWait, which denies what no
// grant covers, they were served 84.9% of the reference, 99.6% owned).
// The window before is required too: early in a window C holds only the
// units reported so far, and another PoP's are often still unreported
// spends of its grant, so the last window alone called an identity
// spread over the PoPs owned (the small limit's near-limit clients: 78
// wrongly limited against 28; with both windows 38). When the identity
// moves to or spreads over other PoPs, the first reply that counts
// another PoP's unit ends it, and the
// balance held here shrinks at the next Sync without demand to what the
// rate expects over the grant's horizon (Tick's returns). From this
// PoP's first unit in a window Redis has not answered about until the
// reply that does, its own counts no longer reach the window before
// Redis' last, and the top-ups it asks before that reply are shares.
func (m *Machine) owned(e *entry) bool {
	return m.contested(e) && m.sole(e) && e.lowPrev > 0 && m.reportedIn(e, e.lowW-1) >= e.lowPrev
}

// divisor is the divisor of Redis' headroom e's top-up is granted by (the
// Item's Divisor): Redis grants the want while the headroom is at least
// the divisor times it, else the headroom over the divisor. 1 when this
// PoP owns e (owned). Else, under NoWait, while e is contested and Redis
// has counted it in two windows, C/mine rounded and held within [1, P],
// C and mine the units Redis counted of e in its last two windows and
// those of them this PoP reported: this PoP's part of the demand, so a
// PoP serving half an identity's units asks half the headroom, one
// serving most of them all of it, and one serving a P-th or less an
// equal share. Else 0: a quarter of an equal share (4P). Safety does
// not rest on it: a grant never passes the headroom. NoWait denies here
// what no grant covers, so a grant sized for P PoPs short-changed the
// few PoPs an identity uses: near-limit clients on one to three of eight
// PoPs (pop-sim's mixed) were served 94.7% of pure Redis' quota with the
// quarter of an equal share, 96.9% with a quarter of this PoP's part
// (4·C/mine within [4, 4P]), 97.6% with half of it and 97.8% with all of
// it; clients spread over every PoP 90.6%, 90.6%, 90.9% and 91.7%. A new
// identity's grant stays the quarter of an equal share: half of one
// served the flash crowd over 1 s 94.2% of pure Redis' quota, against
// 96.9%. The default sends a request no grant covers to Redis instead,
// and a quarter of this PoP's part bought it 0.1 point of round trips for
// the worst identity 0.01 over the limit further on 6 of 22 lines
// (scripts/budget-lines.sh). From this PoP's first unit in a window
// Redis has not answered about until the reply that does, the divisor
// reads high (part): the grant is smaller, never larger.
func (m *Machine) divisor(e *entry) int64 {
	if m.owned(e) {
		return 1
	}
	if !m.cfg.NoWait || !m.contested(e) || e.lowPrev <= 0 {
		return 0
	}
	mine, counted := m.part(e)
	if mine <= 0 {
		return 0
	}
	d := (2*counted + mine) / (2 * mine) // counted/mine, rounded
	return min(max(d, 1), int64(m.cfg.PoPs))
}

// part is this PoP's part of what Redis counted of e: the units Redis
// counted in its last two windows (counted) and those of them this PoP
// reported (mine). The grant divisor and the flood test read it. From
// this PoP's first unit in a window Redis has not answered about until
// the reply that does, its own count of the window before Redis' last has
// rolled away while Redis' still holds it, and mine reads low (an
// identity served here alone reads about half served here at a window's
// start): the divisor reads high (a smaller grant) and the flood test
// takes a demand near twice the limit for a flood. Comparing Redis' last
// window alone then was measured on every line (scripts/budget-lines.sh)
// and not kept: bursts' decision error on mixed +0.56 → +0.74 point over
// pure Redis', at 32 PoPs +0.73 → +0.91, no other figure moving by as
// much (a burst straddles a window boundary, and read as the flood it is
// there its requests were denied here as the exact log denies them).
func (m *Machine) part(e *entry) (mine, counted int64) {
	return m.reported(e) + m.reportedIn(e, e.lowW-1), e.lowC + e.lowPrev
}

// sole reports whether every unit Redis counted of e in its last window
// (C, at least one) is one this PoP reported. A second PoP's units there
// end it at the next reply. The grant floor and the outage fallback's
// share both read it.
func (m *Machine) sole(e *entry) bool {
	return e.lowC > 0 && m.reported(e) >= e.lowC
}

// reported is the units this PoP admitted of e in Redis' last window (lowW)
// that a reply has counted: its own count there less the unreported.
func (m *Machine) reported(e *entry) int64 {
	return m.reportedIn(e, e.lowW)
}

// reportedIn is the units this PoP admitted of e in window y that a
// reply has counted: its own count there less the unreported.
func (m *Machine) reportedIn(e *entry, y int64) int64 {
	return ownIn(e.own, y) - m.unreported(e, y)
}

// topUp is the grant e should ask for at window x: its demand rate over the
// horizon (a window while e is far from its limit, m.horizon() once
// contested), at most a quarter of the limit, minus its live balance. The
// rate far from the limit is the one averaged over about a window (one
// request since the last Sync is no rate of ten a second) unless asking:
// a decision Call, made for a request the budget could not cover. Far
// from the limit the free credit covers FreeCredit units a window, and a
// balance of half the target or more asks nothing: a calm identity tops
// up about twice a window, not every Sync. A contested identity with
// demand asks at least 1 unit.
func (m *Machine) topUp(e *entry, x int64, asking bool) int64 {
	contested := m.contested(e)
	rate, horizon := e.rate, float64(m.w)
	if contested || asking {
		// near the limit a grant lasts a few Syncs, and a request the
		// budget could not cover is demand beyond the free credit:
		// follow the demand since the last Sync at once
		rate = max(rate, float64(e.demand)/float64(m.cfg.SyncInterval.Milliseconds()))
	}
	if contested {
		horizon = m.horizon()
	}
	target := min(int64(math.Ceil(rate*horizon)), max(1, m.cfg.Limit.Max/4))
	if !contested {
		target -= m.creditOf(x, e.key) // none before the lease (lease.go)
	} else if e.demand > 0 {
		target = max(target, 1)
	}
	var bal int64
	for _, g := range e.grants {
		if g.win >= x { // a grant of x−1 ends with x, and an item gives up x+1's free slot
			bal += g.bal
		}
	}
	if target <= 0 || (!contested && 2*bal >= target) {
		return 0
	}
	return max(0, target-bal)
}

// addOp records op in e's unreported ops, merged with one of the same
// windows.
func (e *entry) addOp(op Op) {
	ops := e.pending()
	for i := range ops {
		if ops[i].X == op.X && ops[i].GW == op.GW {
			ops[i].U += op.U
			return
		}
	}
	if e.ops == nil {
		e.ops = new([]Op)
	}
	*e.ops = append(*e.ops, op)
}

// pending is e's unreported ops. They sit behind a pointer, nil when
// there are none (most full entries at rest), so an entry holds 8 bytes
// for them rather than a slice's 24: that fits a full entry in Go's
// 224-byte size class (TestEntrySize), and an entry with ops pays 24
// bytes more while it has them.
func (e *entry) pending() []Op {
	if e.ops == nil {
		return nil
	}
	return *e.ops
}

// takeOps returns e's unreported ops and leaves it none (they go in an
// Item).
func (e *entry) takeOps() []Op {
	ops := e.pending()
	e.ops = nil
	return ops
}

// absorb applies Redis' answer about e to a call this PoP sent at sent
// (its own clock): the grant, the lower bound of C, and a deny-until when
// C alone already denies a unit. The reply's waits count from sent, not
// from r.Now: Redis' clock may be off the PoP's (in production the calls
// run on Redis' clock), and a request this PoP sends at sent + wait
// reaches Redis the reply's wait after the call did.
func (m *Machine) absorb(e *entry, sent int64, r *Result, it ItemResult) {
	e.heard = max(e.heard, sent)
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
	if r.Window >= e.lowW || m.ahead(e.lowW) { // a count of a window ahead of the Ticks (a request stamped early) gives way
		e.lowW, e.lowC, e.lowPrev = r.Window, it.CW, it.CPrev
		elapsed := r.Now - r.Window*m.w
		if !core.SlidingAdmits(core.SlidingEstimate(it.CW, it.CPrev, elapsed, m.w), m.cfg.Limit.Max, 1) {
			retry := core.SlidingRetryMillis(it.CW, it.CPrev, elapsed, m.w, m.cfg.Limit.Max, 1)
			e.denyUntil = max(e.denyUntil, sent+retry)
			m.tell(e) // the other PoPs deny it too (gossip.go)
		}
	}
	if it.Headroom > 0 || it.Grant > 0 {
		e.fullUntil = 0
	} else {
		// Known full: requests the budget cannot cover are denied here
		// for a wait, and Syncs ask no grant until it ends: the reply's
		// retry (until one unit would fit), at most a Sync interval when
		// budget held elsewhere fills the limit, and, when admissions fill
		// it and this PoP asks over twice its share, the retry plus a
		// part of refillFor() drawn uniformly (spread), or, where this
		// PoP alone served the identity, max(retry, refillFor()).
		back := max(1, it.Retry)
		switch {
		case !m.saturated(r, it):
			// what fills the limit is budget held elsewhere, not
			// admissions: it comes back within a Sync or two
			back = min(back, m.cfg.SyncInterval.Milliseconds())
		case m.greedy(e) && (m.cfg.PoPs == 1 || m.sole(e)):
			// no other PoP asks: nothing to spread, and a draw past the
			// retry would deny what pure Redis admits
			back = max(back, m.refillFor(e, r, it))
		case m.greedy(e):
			back += spread(e.key, m.cfg.PoP, r.Now, m.refillFor(e, r, it))
		}
		e.fullUntil = max(e.fullUntil, sent+back)
	}
	e.headroom = it.Headroom
}

// grantInFlight reports whether e's group has a Sync batch out, or to be
// sent again, whose item for e asked a grant: its reply may bring budget
// Redis already counted as this PoP's.
func (m *Machine) grantInFlight(e *entry) bool {
	if !e.inBatch {
		return false
	}
	gs := &m.groups[m.group(int(e.bucket))]
	return asksGrant(gs.inflight, e.key) || asksGrant(gs.retry, e.key)
}

// asksGrant reports whether batch b (nil: none) has an item for key that
// asks a grant (a batch's items are sorted by key: Tick).
func asksGrant(b *Call, key string) bool {
	if b == nil {
		return false
	}
	i, ok := slices.BinarySearchFunc(b.Items, key, func(it Item, k string) int { return cmpString(it.Key, k) })
	return ok && b.Items[i].Want > 0
}

// spread is a wait drawn uniformly from [0, d) ms by a hash of the
// identity, the PoP and Redis' time of the reply (deterministic, so the
// simulator replays it). The PoPs denied at saturation then ask again
// spread over the time the limit takes to free one unit for each, about
// once per unit freed, as pure Redis admits them: waiting max(retry,
// refillFor()) instead ended every PoP's wait at the same instants (a
// window's start above all) and the units freed meanwhile went out
// together, a burst the sliding estimate allows but an exact log counts
// past the limit (spread-attack over 32 PoPs: 1.16–1.22× the limit over
// four seeds, pure Redis 1.05–1.10×, spread 1.06–1.09×; a draw from
// [0, d/2) 1.05–1.11× at 6 points fewer round trips saved, [0, 3d/2)
// 1.07–1.10×, [0, 2d) 1.09–1.12×).
func spread(key, pop string, now, d int64) int64 {
	if d <= 1 {
		return 0
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(pop))
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(now))
	h.Write(b[:])
	return int64(h.Sum64() % uint64(d))
}

// refill is the ms the limit takes to free one unit per PoP at saturation
// (P × window / Max): a full identity's PoPs wait that long before asking
// again, so together they ask about once per unit freed, not once per Sync.
func (m *Machine) refill() int64 {
	return int64(m.cfg.PoPs) * m.w / m.cfg.Limit.Max
}

// refillFor is refill() scaled to this PoP's share of e's admissions: the
// units this PoP admitted in Redis' window of r and the one before,
// against C of those windows (Redis' count). A PoP that admitted a
// fraction s of them waits window / (Max × s) ms, the time the limit takes
// to free one unit for its share, and at least two units' time: refill()
// when it holds 1/P of them, two units' time (2 × window / Max) from half
// of them on. Waiting refill() whatever the share denied an identity
// served at one PoP for P units' time; the previous window's weight
// decays meanwhile, and the requests after the gap passed in a burst the
// sliding estimate allows but an exact log counts past the limit (the
// floor of two units keeps such a PoP from asking Redis at every unit
// freed). With no admissions here or at Redis to compare, refill(); a
// reply of window x landing after this PoP admitted a unit in x+1 waits
// two units' time when this PoP admitted all of window x (refill() there
// made every window boundary a gap of P units' time for an identity
// served at one PoP), else refill() (comparing window x alone, a spread
// identity's share read high on pop-sim's spread-attack).
func (m *Machine) refillFor(e *entry, r *Result, it ItemResult) int64 {
	own := e.own
	own.Roll(r.Window)
	mine, all := own.Cur+own.Prev, it.CW+it.CPrev
	if own.Index == r.Window+1 && own.Prev >= it.CW {
		// a reply of the window before landed after this PoP admitted
		// a unit in the next, and this PoP admitted all of that window
		mine, all = 1, 1
	}
	if own.Index > r.Window+1 || mine <= 0 || all <= 0 {
		return m.refill()
	}
	share := min(1, float64(mine)/float64(all))
	unit := float64(m.w) / float64(m.cfg.Limit.Max)
	return min(m.refill(), max(1, int64(math.Ceil(unit*max(2, 1/share)))))
}

// greedy reports whether e asks at this PoP more than twice this PoP's
// share (1/P) of the rate the limit admits: then many requests compete
// for each unit freed, and waiting refill() costs it nothing it would get.
// The request just decided is not counted: one request since the last
// Sync says nothing of a rate.
func (m *Machine) greedy(e *entry) bool {
	rate := max(e.rate, float64(e.demand-1)/float64(m.cfg.SyncInterval.Milliseconds()))
	return rate*float64(m.w)*float64(m.cfg.PoPs) >= 2*float64(m.cfg.Limit.Max)
}

// saturated reports whether the units Redis knows were admitted (C alone,
// a lower bound of the truth) leave fewer than P units under the limit:
// then the limit, not budget other PoPs hold, is what denies.
func (m *Machine) saturated(r *Result, it ItemResult) bool {
	est := core.SlidingEstimate(it.CW, it.CPrev, r.Now-r.Window*m.w, m.w)
	return !core.SlidingAdmits(est, m.cfg.Limit.Max, int64(m.cfg.PoPs))
}

// usedReach is how many windows usedMask marks: the newest used one and
// the usedReach−1 before it.
const usedReach = 8

// useFree records that e's free slot of window x is used, x past every
// slot e consumed (x > e.claimed): the windows used before it stay marked
// in usedMask while they are within usedReach−1 windows, so no claim
// gives one of them up (claims reach back to the window before a
// request's, and a request may be stamped a window or two behind the
// newest; windows up to Machine.forgot are never claimed).
func (e *entry) useFree(x int64) {
	switch d := x - e.usedFree; {
	case e.usedFree == math.MinInt64 || d >= usedReach:
		e.usedMask = 0
	default:
		e.usedMask = e.usedMask<<d | 1<<d
	}
	e.claimed, e.usedFree = x, x
}

// used reports whether e's free slot of window y is used, or may be: a
// window usedReach or more before the newest used one is past usedMask's
// reach, so its slot counts as used and no claim gives it up (a request
// stamped far ahead, then one stamped back in an older window, gave up
// again a slot its report had claimed: another PoP's slot went
// unreserved; TestUsedSlotPastTheMask).
func (e *entry) used(y int64) bool {
	k := e.usedFree - y
	return e.usedFree != math.MinInt64 && (k == 0 || k >= usedReach || (k > 0 && e.usedMask&(1<<k) != 0))
}
