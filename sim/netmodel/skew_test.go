package netmodel

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSkewsSpreadAndDeterministic(t *testing.T) {
	d := 2 * time.Second
	a := Skews(8, d, 1)
	require.True(t, slices.Equal(a, Skews(8, d, 1)), "same seed, different skews")
	sorted := slices.Sorted(slices.Values(a))
	require.False(t, sorted[0] != -d || sorted[7] != d, "skews %v do not reach ±%s", a, d)
	for i := 1; i < len(sorted); i++ {
		require.False(t, sorted[i] <= sorted[i-1], "skews %v not evenly spread", sorted)
	}
	require.False(t, slices.Equal(a, Skews(8, d, 2)) && slices.Equal(a, Skews(8, d, 3)), "the seed does not change which PoP gets which offset")
	for _, z := range [][]time.Duration{Skews(8, 0, 1), Skews(1, d, 1)} {
		for _, s := range z {
			require.EqualValues(t, 0, s, "no skew asked, got %v", z)
		}
	}
}

// TestSkewsSpreadLargeSkewsWithoutOverflow checks that skews of years,
// which a trace dated 2026 can take before a clock reads before 1970,
// still spread evenly over [−d, +d] with many PoPs: the mutation of
// computing 2·d·i in one product, which overflows Duration past
// 292 years ÷ 2(PoPs − 1), catches it.
func TestSkewsSpreadLargeSkewsWithoutOverflow(t *testing.T) {
	for _, c := range []struct {
		pops int
		d    time.Duration
	}{{8, 200000 * time.Hour}, {8, 490896 * time.Hour}, {1000, 2000 * time.Hour}, {1000, 490896 * time.Hour}} {
		sorted := slices.Sorted(slices.Values(Skews(c.pops, c.d, 1)))
		require.Equal(t, -c.d, sorted[0], "%d PoPs, ±%s: first offset", c.pops, c.d)
		require.Equal(t, c.d, sorted[c.pops-1], "%d PoPs, ±%s: last offset", c.pops, c.d)
		step := 2 * (c.d / time.Duration(c.pops-1))
		for i := 1; i < len(sorted); i++ {
			gap := sorted[i] - sorted[i-1]
			require.True(t, gap >= step && gap <= step+2, "%d PoPs, ±%s: offsets %s and %s are %s apart, want about %s",
				c.pops, c.d, sorted[i-1], sorted[i], gap, step)
		}
	}
}
