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
// its burst of Max and then refills one unit per BucketInterval, Max per
// Max × BucketInterval µs: Max per Window when Max divides the window in
// µs, faster by the interval's rounding otherwise (750,000 per second, an
// interval of 1.33 µs taken as 1, refills 1,000,000 per second). It pins
// the rate the package doc states, catching a change to BucketInterval or
// to the refill.
func TestBucketRefillRate(t *testing.T) {
	const windows = 10
	for _, c := range []struct {
		l        Limit
		n, units int64
	}{
		{Limit{Max: 1000, Window: time.Second, Algorithm: TokenBucket}, 5, 1000 + windows*1000},
		{Limit{Max: 750_000, Window: time.Second, Algorithm: TokenBucket}, 2000, 750_000 + windows*1_000_000},
	} {
		got := bucketAdmitted(c.l, c.n, windows)
		require.InDelta(t, c.units, got, float64(c.n), "%v over %d windows: admitted %d, want about %d", c.l, windows, got, c.units)
	}
}
