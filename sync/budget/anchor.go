package budget

import "math"

// A reply's waits (deny-until, known full, Redis' retry, when it was
// heard) count from the time this PoP sent the call (absorb): a request
// at that time plus the wait reaches Redis the wait after the call did.
// A decision Call is planned at its request's time, which a caller may
// stamp ahead of the PoP's clock (AllowN takes the caller's time); Redis
// decides it on its own clock (Limiter's default), not at the stamp, so
// waits counted from the stamp would deny this PoP's on-time requests of
// the identity from the view until the stamp's time plus the wait,
// however long past Redis' word that is. So a call planned more than a
// Sync interval and a round trip past the PoP's clock as last read (the
// latest of a Tick's time and a driver's Clock) is taken as sent at that
// reading: its waits end no later than Redis' word on the PoP's clock, and
// at worst a request asks Redis once more a little early
// (TestStampedAheadDenialKeepsOthersWaiting). A driver that calls Clock
// with its clock before each request keeps that reading current: without
// it, a late Tick (a Limiter's Sync runs none while its batches wait on a
// slow Redis) makes on-time requests look stamped ahead, and their waits
// end early (TestClockKeepsOnTimeWaits).
// Describe reads the waits of Redis' denial of a request from the same
// anchor (the stamped request is told Redis' wait), and those of any other
// denial (deny cache, known full) from the request's time: read from the
// anchor, an on-time request after a late Tick (and no Clock) was told a
// Retry-After longer by the time since that Tick
// (TestLateTickDenyCacheRetryAfter).
// The grace after an outage, when such a call's reply is the one that
// finds Redis back (recovered), counts from arrivedAt: from its arrival on
// the stamp's timeline it kept contested identities on the fallback until
// the stamp's time (TestStampedAheadRecoveryKeepsTheGrace). A late Tick,
// without Clock, looks the same to sentAt (a Limiter's Sync runs none while its batches
// wait on a slow Redis, as in an outage), so the grace does not count from
// the anchor alone: counted from the last Tick's time it had ended before
// an on-time reply came (TestLateTickRecoveryKeepsTheGrace).

// Clock records that this PoP's clock reads now (ms): the anchor of the
// waits of a request stamped ahead of it (see sentAt). Readings never move
// it back. Drivers call it with their own clock before each request and
// as a Sync's replies arrive, before Finish (Limiter does): it is also
// when a batch's reply landed (landedAt). Tick records its time too.
// Calling it is optional: a Machine never told anchors on its Ticks'
// times alone, and starts the grace after an outage at the later of a
// batch's send time and the last Tick's.
func (m *Machine) Clock(now int64) { m.clockAt = max(m.clockAt, now) }

// sentAt is the time on this PoP's clock a call planned at now counts its
// reply's waits from: now, or the PoP's clock as last read (clockAt) when
// now is more than a Sync interval and a round trip past it (a stamp ahead
// of the PoP's clock). Before any reading it is now.
func (m *Machine) sentAt(now int64) int64 {
	if m.clockAt != math.MinInt64 && now-m.clockAt > (m.cfg.SyncInterval+m.cfg.RTT).Milliseconds() {
		return m.clockAt
	}
	return now
}

// arrivedAt is when decision Call c's reply r, arriving at now on the
// request's timeline, came on this PoP's clock: its arrival, but no later
// than Redis' clock when it ran the call (Result.Now, the PoP's clock
// within the skew the PoPs keep) for a request stamped ahead of both,
// and no earlier than sent (sentAt) plus the round trip.
func (m *Machine) arrivedAt(sent, now int64, c *Call, r *Result) int64 {
	return max(sent+max(0, now-c.Now), min(now, r.Now))
}
