package budget

import "math"

// Gossip's counts are in Redis' windows, and a count denies for as long as
// its sliding estimate leaves no room at Redis' time; a PoP whose clock
// runs behind Redis' read them at its own time and denied up to that lag
// past the instant Redis (and pure Redis) admits again (1.5 s behind, a
// skew the deny cache's own waits tolerate: TestGossipDenialRunsOnRedisClock).
// So a PoP estimates how far Redis' clock runs ahead of its own from its
// Syncs' replies: a batch planned at c.Now (the PoP's clock; a batch is
// never stamped by a caller) ran at Redis' r.Now, so r.Now − c.Now is the
// lag plus a one-way delay and a queue, never less than the lag. The least
// of those samples over the last two epochs of 64 Sync intervals (so a
// clock put right is followed within two epochs) estimates the lag from
// above, and Hear reads heard counts at the PoP's time plus it: at or
// after Redis' own time, where the counts (lower bounds) weigh no more
// than at Redis, so a gossip denial ends no later than Redis' own would
// (with several Cluster nodes, the one whose lag is least). A PoP ahead
// of Redis, or with no sample yet, reads at its own time, as before
// (never earlier than Redis' on that side).

// redisClock is the estimate of how far Redis' clock runs ahead of this
// PoP's. The zero value holds no sample.
type redisClock struct {
	epoch int64    // the epoch of least[0]
	least [2]int64 // the least sample of the current epoch and of the one before (math.MaxInt64: none)
	known bool
}

// note records that a batch planned at sent (this PoP's clock) ran at
// Redis' redisNow; epochLen is an epoch's length in ms.
func (rc *redisClock) note(sent, redisNow, epochLen int64) {
	ep := floorDiv(sent, epochLen)
	switch {
	case !rc.known:
		rc.epoch, rc.least, rc.known = ep, [2]int64{math.MaxInt64, math.MaxInt64}, true
	case ep == rc.epoch+1:
		rc.epoch, rc.least = ep, [2]int64{math.MaxInt64, rc.least[0]}
	case ep > rc.epoch+1:
		rc.epoch, rc.least = ep, [2]int64{math.MaxInt64, math.MaxInt64}
	case ep < rc.epoch-1:
		return // a batch older than the epochs kept
	}
	i := 0
	if ep < rc.epoch {
		i = 1
	}
	rc.least[i] = min(rc.least[i], redisNow-sent)
}

// ahead is how far Redis' clock is taken to run ahead of this PoP's: the
// least sample kept, and 0 when it is negative or there is none.
func (rc *redisClock) ahead() int64 {
	if !rc.known {
		return 0
	}
	if l := min(rc.least[0], rc.least[1]); l != math.MaxInt64 {
		return max(0, l)
	}
	return 0
}
