package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// burstThenSteady replays, with core's sliding-window math alone, a client
// of limit 50 per 10 s that sends a burst of 50 requests at burstMs into
// window 0, then one request every stepMs for the next two windows. It
// returns the most requests admitted in any 10-s interval (t − 10 s, t].
func burstThenSteady(burstMs, stepMs int64) int {
	const w = 10_000
	l := Limit{Max: 50, Window: w * time.Millisecond}
	var s WindowState
	var admitted []int64
	for i := 0; i < 50; i++ {
		if s.DecideSliding(l, t0+burstMs, 1, true).Allowed {
			admitted = append(admitted, t0+burstMs)
		}
	}
	for at := burstMs + stepMs; at < 3*w; at += stepMs {
		if s.DecideSliding(l, t0+at, 1, true).Allowed {
			admitted = append(admitted, t0+at)
		}
	}
	return maxInInterval(admitted, w)
}

// maxInInterval is the most stamps (sorted) in any interval (t − w, t].
func maxInInterval(stamps []int64, w int64) int {
	best, lo := 0, 0
	for hi, t := range stamps {
		for stamps[lo] <= t-w {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// TestSlidingWorstCaseTwice measures the sliding window counter's worst
// over-admission, which the article's boundary burst (102 of 100) does not
// show. A burst of Max at b into one window, then steady traffic: the
// burst's weight fades over the next window, which readmits as it fades, so
// an interval of one window holds up to Max × (1 + b/w): 75 of 50 for a
// burst at 50%, 90 at 80%, 95 at 90%, and exactly 100 (2×, as much as a
// fixed window) for a burst in the last w/Max of the window followed by a
// request every 100 ms or faster (a run outside the project measured 88 of 50). Run:
//
//	go test ./core -run TestSlidingWorstCaseTwice -v
func TestSlidingWorstCaseTwice(t *testing.T) {
	worst := 0
	for _, b := range []int64{5_000, 8_000, 9_000, 9_900, 9_999} {
		for _, s := range []int64{10, 50, 100, 200} {
			n := burstThenSteady(b, s)
			worst = max(worst, n)
			t.Logf("burst at %4d ms, a request every %3d ms: at most %3d of 50 in 10 s (%.2f×)", b, s, n, float64(n)/50)
			bound := 50 + 50*b/10_000
			if assert.LessOrEqual(t, n, int(bound)+1, "burst at %d ms, step %d ms: %d admitted, want about Max × (1 + b/w) = %d", b, s, n, bound) {
				assert.GreaterOrEqual(t, n, int(bound)-2, "burst at %d ms, step %d ms: %d admitted, want about Max × (1 + b/w) = %d", b, s, n, bound)
			}
		}
	}
	require.Equal(t, 100, worst, "worst case %d of 50, want exactly 2× (100)", worst)
}
