package traffic

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stableSorted is what sortRequests gave before radixSort: the one stable
// order by At.
func stableSorted(rs []Request) []Request {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b Request) int { return cmp.Compare(a.At, b.At) })
	return out
}

// TestRadixSortIsTheStableSort checks radixSort against a stable
// comparison sort on requests whose ID records their original place, over
// inputs with many ties, negative and extreme times, and spans of one to
// all 64 bits (an odd number of passes leaves the result in the scratch
// slice).
func TestRadixSortIsTheStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spans := []int64{1, 2, 7, 1 << 11, 1 << 22, 1 << 33, 360e9, math.MaxInt64}
	for _, span := range spans {
		for _, n := range []int{0, 1, 2, 3, 100, 5000} {
			rs := make([]Request, n)
			for i := range rs {
				at := rng.Int64N(span)
				if rng.IntN(2) == 0 {
					at = -at
				}
				rs[i] = Request{At: time.Duration(at), ID: int32(i), PoP: int16(rng.IntN(8)), N: 1}
			}
			if n > 2 {
				rs[0].At, rs[1].At = math.MinInt64, math.MaxInt64
			}
			want := stableSorted(rs)
			radixSort(rs)
			require.True(t, slices.Equal(rs, want), "span %d, %d requests: radixSort differs from the stable sort", span, n)
		}
	}
}

// TestRadixSortKeepsTiesInOrder sorts many requests on a few distinct
// times: each time's requests must keep their generation order.
func TestRadixSortKeepsTiesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rs := make([]Request, 10000)
	for i := range rs {
		rs[i] = Request{At: time.Duration(rng.IntN(5)) * time.Second, ID: int32(i)}
	}
	want := stableSorted(rs)
	radixSort(rs)
	require.True(t, slices.Equal(rs, want), "ties lost their order")
}

// BenchmarkSortRequests sorts 1,000,000 requests over six minutes at
// microsecond resolution, as a generated trace's, with the old stable
// comparison sort and with radixSort.
func BenchmarkSortRequests(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	rs := make([]Request, 1_000_000)
	for i := range rs {
		rs[i] = Request{At: time.Duration(rng.Int64N(360e6)) * time.Microsecond, ID: int32(i)}
	}
	work := make([]Request, len(rs))
	b.Run("stable", func(b *testing.B) {
		for b.Loop() {
			copy(work, rs)
			slices.SortStableFunc(work, func(a, b Request) int { return cmp.Compare(a.At, b.At) })
		}
	})
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(work, rs)
			radixSort(work)
		}
	})
}
