package budget

import "time"

// A decision Call's age. Redis runs a decision when the Call arrives, one
// one-way delay after the request was made; the sliding estimate there
// weighs the previous window less than it did at the request, by prev ×
// delay / window. At a limit of 1,000 per 10 s that is up to 7.5 units at
// 75 ms, and Redis admitted requests the exact log, judging each at the
// instant it was made, counts past the limit (pop-sim's near-limit at a
// limit of 1,000: decision error 19.8% against pure Redis' 12.6%, pure
// Redis deciding on the caller's clock). So a decision Call carries its
// age, this PoP's estimate of that delay, and Redis takes the decision's
// estimate and retry as of now − age (lua/budget.lua, ARGV[16]).
//
// Invariant: an aged decision is only more cautious than one at Redis'
// now. Within Redis' window the previous window weighs at least as much
// at an earlier instant, so the estimate is at least the one at now; an
// age reaching back before the window's start is not applied (the
// decision is at now, as without an age); E1, grants and every other
// check stay at now. The budget invariant, which holds at now, holds.
//
// Not for greedy identities (this PoP asks over twice its share,
// Machine.greedy): many Calls contest each unit the limit frees, and an
// aged check sends away those arriving within the age of its freeing, to
// wait and ask again (mixed: 2.7 points fewer round trips saved, 5.8 at
// 32 PoPs on spread-attack, when every decision was aged).
//
// A Limiter given a clock runs its Calls at the request's own time
// (Limiter.at): it sends them without an age. A Call that asks a top-up
// gets a grant sized at now, which can pay the request the aged check
// denied (payHereLate): there the verdict is now's, as before.

// oneWayWeight is the weight of the newest sample in oneWay's average.
const oneWayWeight = 1.0 / 8

// heardBack folds a decision Call's round trip, rtt ms on this PoP's
// clock from its request to its reply, into oneWay: half of it, averaged
// (exponentially, oneWayWeight). A negative rtt (a reply handed back on
// a clock behind the request's) is ignored. A sample counts as at most
// oneWayCap: a slow reply (a client pool's wait, a pause, a NOSCRIPT's
// second round trip, the first call's dial) took round trips or waits
// the next Call will not, and an age too long denies near the limit what
// Redis at the request's instant would admit.
func (m *Machine) heardBack(rtt int64) {
	if rtt < 0 {
		return
	}
	half := min(float64(rtt)/2, m.oneWayCap())
	if !m.oneWayKnown {
		m.oneWay, m.oneWayKnown = half, true
		return
	}
	m.oneWay += (half - m.oneWay) * oneWayWeight
}

// oneWayCap is the most one sample counts as, ms: the larger of twice
// oneWay's average, the expected one-way delay (half Config.RTT) and 1
// ms. So the first sample counts at most the expected delay, and an
// average below it, or near 0, can still grow. A delay above the
// expected one is followed at most an eighth of the average a Call
// (about six Calls to double): while it catches up the age is too short,
// as it was before ages were sent, not too long.
func (m *Machine) oneWayCap() float64 {
	return max(2*m.oneWay, float64(m.cfg.RTT)/float64(2*time.Millisecond), 1)
}

// ageFor is the age, ms, of a decision Call about e planned now: this
// PoP's one-way delay to Redis (oneWay, rounded down), or 0 before any
// decision Call's reply came back and while e is greedy here.
func (m *Machine) ageFor(e *entry) int64 {
	if !m.oneWayKnown || m.greedy(e) {
		return 0
	}
	return int64(m.oneWay)
}
