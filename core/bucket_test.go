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

// TestBucketFraction: the TAT carries the fraction of a µs the interval
// has when Max does not divide the window (3 per ms: 333⅓ µs a unit), so
// three units move it by exactly 1,000 µs; the fraction rounds ResetAfter
// and RetryAfter up, and a state whose Rem is Max or more (never written
// by Decide) is folded into the TAT. It catches an interval rounded to
// whole µs (three units then move the TAT 999 µs) and a fraction dropped
// on commit.
func TestBucketFraction(t *testing.T) {
	l := Limit{Max: 3, Window: time.Millisecond, Algorithm: TokenBucket}
	var s BucketState
	for i, want := range []BucketState{{t0*1000 + 333, 1}, {t0*1000 + 666, 2}, {t0*1000 + 1000, 0}} {
		d := s.Decide(l, t0, 1, true)
		require.True(t, d.Allowed, "unit %d: %+v", i, d)
		require.Equal(t, want, s, "unit %d", i)
		require.Equal(t, int64(2-i), d.Remaining, "unit %d: %+v", i, d)
		require.Equal(t, time.Millisecond, d.ResetAfter, "unit %d: %+v", i, d)
	}
	d := s.Decide(l, t0, 1, true)
	require.False(t, d.Allowed, "a fourth unit at one instant: %+v", d)
	require.Equal(t, time.Millisecond, d.RetryAfter, "a unit 333⅓ µs away waits a whole ms: %+v", d)

	folded := BucketState{TAT: t0*1000 + 1000, Rem: 0}
	unfolded := BucketState{TAT: t0*1000 + 999, Rem: 3}
	require.Equal(t, folded.Decide(l, t0, 1, false), unfolded.Decide(l, t0, 1, false), "Rem of Max is one more µs")
}

// TestBucketWeightOutOfRange: Decide, exported for limiters built on core,
// denies a weight above Max (never fitting) and takes a negative one as 0
// instead of panicking in its multiply-divide (n × window/Max past an
// int64 at n = 2^62 with a 100-year window) or counting a negative weight.
func TestBucketWeightOutOfRange(t *testing.T) {
	l := Limit{Max: 3, Window: MaxWindow, Algorithm: TokenBucket}
	var s BucketState
	d := s.Decide(l, t0, 1<<62, true)
	require.False(t, d.Allowed, "weight 2^62 of a limit of 3: %+v", d)
	require.Equal(t, BucketState{}, s, "a denied weight changed the state")
	d = s.Decide(l, t0, -5, true)
	require.True(t, d.Allowed, "weight -5: %+v", d)
	require.Equal(t, int64(3), d.Remaining, "weight -5 spent units: %+v", d)
}
