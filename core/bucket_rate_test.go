package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bucketAdmitted drives a full bucket of limit l with requests of weight n
// every millisecond for windows windows and returns the units admitted.
func bucketAdmitted(l Limit, n, windows int64) int64 {
	var s BucketState
	admitted := int64(0)
	for now := t0; now < t0+windows*l.WindowMillis(); now++ {
		if s.Decide(l, now, n, true).Allowed {
			admitted += n
		}
	}
	return admitted
}

// TestBucketRefillRate: under a demand above the limit, the bucket admits
// its burst of Max and then refills Max units per window, whether or not
// Max divides the window in µs. It catches an interval rounded to whole
// µs (750,000 per second, an interval of 1⅓ µs taken as 1, refilled
// 1,000,000 per second; 60,000 per second refilled 62,500) or rounded up
// (750,000 per second refilled 500,000).
func TestBucketRefillRate(t *testing.T) {
	const windows = 10
	for _, c := range []struct {
		l        Limit
		n, units int64
	}{
		{Limit{Max: 1000, Window: time.Second, Algorithm: TokenBucket}, 5, 1000 + windows*1000},
		{Limit{Max: 750_000, Window: time.Second, Algorithm: TokenBucket}, 2000, 750_000 + windows*750_000},
		{Limit{Max: 60_000, Window: time.Second, Algorithm: TokenBucket}, 100, 60_000 + windows*60_000},
	} {
		got := bucketAdmitted(c.l, c.n, windows)
		require.InDelta(t, c.units, got, float64(c.n), "%v over %d windows: admitted %d, want about %d", c.l, windows, got, c.units)
	}
}
