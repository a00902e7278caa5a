package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBucketExactBurst: from a full bucket, exactly Max single units pass at
// one instant, for awkward Max and windows from 1ms to 24h.
func TestBucketExactBurst(t *testing.T) {
	windows := []time.Duration{time.Millisecond, 3 * time.Millisecond, time.Second, 7 * time.Second, time.Minute, time.Hour, 24 * time.Hour}
	for _, w := range windows {
		for _, m := range []int64{1, 2, 3, 7, 13, 100, 999, 1000} {
			l := Limit{Max: m, Window: w, Algorithm: TokenBucket}
			if l.Validate() != nil {
				continue // Window/Max below 1µs
			}
			for _, start := range []int64{t0, t0 + 12_345, t0 + 86_399_999} {
				s := BucketState{TAT: start*1000 - 5_000_000_000} // long idle: full
				admitted := int64(0)
				for i := int64(0); i < m+5; i++ {
					if s.Decide(l, start, 1, true).Allowed {
						admitted++
					}
				}
				require.Equal(t, m, admitted, "%v at %d: admitted %d at one instant, want %d", l, start, admitted, m)
			}
		}
	}
}

// TestBucketWeightedBurst: one request of weight Max passes on a full
// bucket, and then nothing until one interval per unit has passed.
func TestBucketWeightedBurst(t *testing.T) {
	l := Limit{Max: 7, Window: time.Second, Algorithm: TokenBucket}
	var s BucketState
	d := s.Decide(l, t0, 7, true)
	require.True(t, d.Allowed, "weight Max on a full bucket: %+v", d)
	require.Equal(t, int64(0), d.Remaining, "weight Max on a full bucket: %+v", d)
	// T = 142857µs: one unit is back after 143ms (rounded up to whole ms).
	d = s.Decide(l, t0, 1, true)
	require.False(t, d.Allowed, "after the burst: %+v, want RetryAfter 143ms", d)
	require.Equal(t, 143*time.Millisecond, d.RetryAfter, "after the burst: %+v, want RetryAfter 143ms", d)
	// 7 × 142857µs = 999.999ms
	require.Equal(t, 1000*time.Millisecond, d.ResetAfter, "ResetAfter = %v, want 1s", d.ResetAfter)
	require.True(t, s.Decide(l, t0+143, 1, true).Allowed, "denied after RetryAfter")
}

// TestBucketInterval: floor(window_µs / Max).
func TestBucketInterval(t *testing.T) {
	got := BucketInterval(Limit{Max: 7, Window: time.Millisecond})
	require.Equal(t, int64(142), got, "BucketInterval(7/1ms) = %d, want 142", got)
	got = BucketInterval(Limit{Max: 1000, Window: time.Millisecond})
	require.Equal(t, int64(1), got, "BucketInterval(1000/1ms) = %d, want 1", got)
}
