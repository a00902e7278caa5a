package core

import (
	"testing"
	"time"
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
				if admitted != m {
					t.Fatalf("%v at %d: admitted %d at one instant, want %d", l, start, admitted, m)
				}
			}
		}
	}
}

// TestBucketWeightedBurst: one request of weight Max passes on a full
// bucket, and then nothing until one interval per unit has passed.
func TestBucketWeightedBurst(t *testing.T) {
	l := Limit{Max: 7, Window: time.Second, Algorithm: TokenBucket}
	var s BucketState
	if d := s.Decide(l, t0, 7, true); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("weight Max on a full bucket: %+v", d)
	}
	// T = 142857µs: one unit is back after 143ms (rounded up to whole ms).
	d := s.Decide(l, t0, 1, true)
	if d.Allowed || d.RetryAfter != 143*time.Millisecond {
		t.Fatalf("after the burst: %+v, want RetryAfter 143ms", d)
	}
	if d.ResetAfter != 1000*time.Millisecond { // 7 × 142857µs = 999.999ms
		t.Fatalf("ResetAfter = %v, want 1s", d.ResetAfter)
	}
	if !s.Decide(l, t0+143, 1, true).Allowed {
		t.Fatal("denied after RetryAfter")
	}
}

// TestBucketInterval: floor(window_µs / Max).
func TestBucketInterval(t *testing.T) {
	if got := BucketInterval(Limit{Max: 7, Window: time.Millisecond}); got != 142 {
		t.Fatalf("BucketInterval(7/1ms) = %d, want 142", got)
	}
	if got := BucketInterval(Limit{Max: 1000, Window: time.Millisecond}); got != 1 {
		t.Fatalf("BucketInterval(1000/1ms) = %d, want 1", got)
	}
}
