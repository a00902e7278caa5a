package netmodel

import (
	"slices"
	"testing"
	"time"
)

func TestSkewsSpreadAndDeterministic(t *testing.T) {
	d := 2 * time.Second
	a := Skews(8, d, 1)
	if !slices.Equal(a, Skews(8, d, 1)) {
		t.Fatal("same seed, different skews")
	}
	sorted := slices.Sorted(slices.Values(a))
	if sorted[0] != -d || sorted[7] != d {
		t.Fatalf("skews %v do not reach ±%s", a, d)
	}
	for i := 1; i < len(sorted); i++ {
		if sorted[i] <= sorted[i-1] {
			t.Fatalf("skews %v not evenly spread", sorted)
		}
	}
	if slices.Equal(a, Skews(8, d, 2)) && slices.Equal(a, Skews(8, d, 3)) {
		t.Fatal("the seed does not change which PoP gets which offset")
	}
	for _, z := range [][]time.Duration{Skews(8, 0, 1), Skews(1, d, 1)} {
		for _, s := range z {
			if s != 0 {
				t.Fatalf("no skew asked, got %v", z)
			}
		}
	}
}
