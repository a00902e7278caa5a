package redis

// Stats counts a Limiter's traffic to Redis since New. The zero value means
// no traffic.
type Stats struct {
	// Calls is the number of script calls sent (decisions and peeks,
	// EVAL retries not counted again), whether they succeeded or not.
	Calls uint64
	// RoundTrips is the number of network round trips: one per EVALSHA,
	// per EVAL retry after NOSCRIPT, per pipeline and per Reset.
	RoundTrips uint64
}

// Stats returns the traffic counted so far.
func (l *Limiter) Stats() Stats {
	return Stats{Calls: l.calls.Load(), RoundTrips: l.trips.Load()}
}
