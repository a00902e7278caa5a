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
// single PoP every offset is 0.
func Skews(pops int, d time.Duration, seed uint64) []time.Duration {
	out := make([]time.Duration, max(pops, 0))
	if d <= 0 || pops < 2 {
		return out
	}
	for i := range out {
		out[i] = -d + 2*d*time.Duration(i)/time.Duration(pops-1)
	}
	r := rand.New(rand.NewPCG(seed, 0x5ca1ab1e0c10c4))
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
