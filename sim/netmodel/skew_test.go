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
