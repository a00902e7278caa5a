package netmodel

import (
	"math/rand/v2"
	"time"
)

// Skews returns one clock offset per PoP, spread evenly over [−d, +d] (the
// first and last PoP of the spread at the two ends, so the worst pair
// disagrees by 2d) and handed to the PoPs in an order shuffled by seed, so
// the PoP nearest Redis is not always the one furthest behind. It is
// deterministic: the same arguments give the same offsets. With d ≤ 0 or a
// single PoP every offset is 0. Every d up to half the longest Duration
// spreads without overflow.
func Skews(pops int, d time.Duration, seed uint64) []time.Duration {
	out := make([]time.Duration, max(pops, 0))
	if d <= 0 || pops < 2 {
		return out
	}
	for i := range out {
		out[i] = -d + spreadStep(d, i, pops-1)
	}
	r := rand.New(rand.NewPCG(seed, 0x5ca1ab1e0c10c4))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// spreadStep is ⌊2·d·i ÷ n⌋ for 0 ≤ i ≤ n, computed without forming 2·d·i,
// which passes the longest Duration at large d and n: with d = q·n + r,
// it is 2·i·q + ⌊2·i·r ÷ n⌋, each term at most 2·d.
func spreadStep(d time.Duration, i, n int) time.Duration {
	q, r := d/time.Duration(n), d%time.Duration(n)
	k := time.Duration(2 * i)
	return k*q + k*r/time.Duration(n)
}
