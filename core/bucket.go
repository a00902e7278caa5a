package core

// BucketState is the per-identity state of the token bucket, computed as
// GCRA: TAT is the theoretical arrival time in microseconds since the Unix
// epoch. 8 bytes. The zero value is a full bucket.
//
// The emission interval is T = floor(window_µs / max) and the burst tolerance
// max × T, all integers, so Go and the Lua script (whose numbers are float64,
// exact below 2^53 µs, that is until the year 2255) agree exactly. The
// refill is one unit per T: max per max × T µs, which is the window only
// when max divides window_µs; the rounding makes the rate up to twice
// max per window when window_µs / max is under 2.
type BucketState struct {
	TAT int64
}

// BucketInterval is GCRA's emission interval in µs for the limit.
func BucketInterval(l Limit) int64 { return l.WindowMillis() * 1000 / l.Max }

// Decide applies the token bucket to n units at now (ms). With commit the
// units are counted when they fit; without, nothing changes (a peek).
func (s *BucketState) Decide(l Limit, now, n int64, commit bool) Decision {
	t := BucketInterval(l)
	tau := t * l.Max
	nowUs := now * 1000
	tat := maxInt(s.TAT, nowUs)
	next := tat + n*t
	d := Decision{Limit: l.Max, Allowed: next-nowUs <= tau}
	if d.Allowed && commit {
		tat = next
		s.TAT = next
	}
	if !d.Allowed {
		d.RetryAfter = ms(ceilDiv(next-tau-nowUs, 1000))
	}
	d.Remaining = maxInt(0, (tau-(tat-nowUs))/t)
	d.ResetAfter = ms(ceilDiv(tat-nowUs, 1000))
	return d
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
