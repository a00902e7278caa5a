package traffic

import (
	"math/bits"
	"time"
)

// radixBits is the digit of radixSort: 2^11 counters stay in L1, and a
// trace of a few minutes at microsecond resolution (under 2^29 µs, in ns
// under 2^39) takes four passes.
const radixBits = 11

// radixSort orders rs by At, stably: a least-significant-digit radix sort
// of At − min(At), which keeps equal keys in their order at every pass, so
// it gives exactly what a stable comparison sort gives (there is one
// stable order), in a few linear passes instead of O(n log² n) moves. It
// needs a second slice as long as rs for the passes.
func radixSort(rs []Request) {
	if len(rs) < 2 {
		return
	}
	lo, hi := rs[0].At, rs[0].At
	for _, r := range rs {
		lo, hi = min(lo, r.At), max(hi, r.At)
	}
	span := uint64(hi) - uint64(lo) // exact even where hi − lo overflows int64
	src, dst := rs, make([]Request, len(rs))
	var count [1 << radixBits]int
	for shift := 0; shift < bits.Len64(span); shift += radixBits {
		digit := func(at time.Duration) int { return int((uint64(at) - uint64(lo)) >> shift & (1<<radixBits - 1)) }
		clear(count[:])
		for _, r := range src {
			count[digit(r.At)]++
		}
		sum := 0
		for d, c := range count {
			count[d], sum = sum, sum+c
		}
		for _, r := range src {
			d := digit(r.At)
			dst[count[d]] = r
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &rs[0] {
		copy(rs, src)
	}
}
