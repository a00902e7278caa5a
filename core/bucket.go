package core

import "math/bits"

// BucketState is the per-identity state of the token bucket, computed as
// GCRA: the theoretical arrival time (TAT) in microseconds since the Unix
// epoch is TAT + Rem/Max, a whole part and a fraction of Max, so the
// emission interval window_µs/Max is exact whatever Max: the bucket
// refills Max units per window, never faster or slower (with the interval
// rounded to whole µs, 750,000 per second refilled 1,000,000 per second).
// 16 bytes. The zero value is a full bucket. Rem lies in [0, Max); Decide
// folds a larger one into TAT.
//
// Go and the Lua script agree exactly: every quantity the script forms is
// an integer below 2^53 (exact in Lua's float64; a stored TAT stays below
// it for request times up to MaxMillis), the products that may pass it
// (units × window, Max × time) are divided by a multiply-divide that
// never forms them (mulDiv here, muldiv in bucket.lua), and the TAT after
// a request's units is formed only when they fit.
type BucketState struct {
	TAT int64
	Rem int64
}

// Decide applies the token bucket to n units at now (ms). With commit the
// units are counted when they fit; without, nothing changes (a peek).
//
// With W the window in µs: n units fit when the TAT after them is at most
// W past now (the burst tolerance, Max intervals of W/Max), a unit comes
// back every W/Max µs, Remaining is floor((W − (TAT + Rem/Max − now)) ×
// Max / W),
// and RetryAfter and ResetAfter are rounded up to whole ms. The backends
// pass n in [1, Max] (Limit.CheckWeight); a larger n is decided as Max+1
// units, which never fit, and a negative one as 0.
func (s *BucketState) Decide(l Limit, now, n int64, commit bool) Decision {
	n = min(max(n, 0), l.Max+1) // n × W/Max must fit an int64 (mulDiv)
	w := l.WindowMillis() * 1000
	nowUs := now * 1000
	tat, rem := s.TAT, s.Rem
	if rem >= l.Max || rem < 0 { // not a state Decide writes: fold it in
		tat += floorDiv(rem, l.Max)
		rem -= floorDiv(rem, l.Max) * l.Max
	}
	if tat < nowUs {
		tat, rem = nowUs, 0
	}
	q, r := mulDiv(n, w, l.Max) // n × W/Max = q + r/Max
	next, nextRem := tat+q, rem+r
	if nextRem >= l.Max {
		next, nextRem = next+1, nextRem-l.Max
	}
	ahead := next - nowUs // the TAT after the units, past now: ahead + nextRem/Max µs
	d := Decision{Limit: l.Max, Allowed: ahead < w || ahead == w && nextRem == 0}
	if d.Allowed && commit {
		tat, rem = next, nextRem
		s.TAT, s.Rem = next, nextRem
	}
	if !d.Allowed {
		d.RetryAfter = ms(ceilDiv(ahead-w+sign(nextRem), 1000))
	}
	if room := w - (tat - nowUs); room > 0 { // (room − rem/Max) µs of burst left
		q, r := mulDiv(l.Max, room, w)
		if r < rem {
			q--
		}
		d.Remaining = maxInt(0, q)
	}
	d.ResetAfter = ms(ceilDiv(tat-nowUs+sign(rem), 1000))
	return d
}

// mulDiv returns q and r with a × b = q × m + r and 0 <= r < m, for
// a, b >= 0 and m > 0 whose quotient fits an int64; the product itself
// may not.
func mulDiv(a, b, m int64) (q, r int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	uq, ur := bits.Div64(hi, lo, uint64(m))
	return int64(uq), int64(ur)
}

// sign is 1 for v > 0, else 0: a fraction of a µs rounds the whole part up.
func sign(v int64) int64 {
	if v > 0 {
		return 1
	}
	return 0
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
