package core

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzDecide drives every algorithm through random limits, weights, times
// and starting states. Nothing may panic; Remaining, RetryAfter and ResetAfter are never
// negative; Remaining never exceeds Max; a denied decision has a positive
// RetryAfter and an allowed one none. While time does not go back, the fixed
// window never admits more than Max in one window number, the log never more
// than Max in any window-long interval, the sliding counter never more than
// Max in one window number either, and the bucket never more than a burst
// plus one window's refill in a window.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(0), uint16(100), uint32(60_000), uint64(1), uint16(300), false)
	f.Add(uint8(1), uint16(7), uint32(1), uint64(2), uint16(50), true)
	f.Add(uint8(2), uint16(999), uint32(86_400_000), uint64(3), uint16(2000), false)
	f.Add(uint8(3), uint16(1), uint32(3), uint64(4), uint16(100), true)
	f.Fuzz(func(t *testing.T, algo uint8, max uint16, windowMs uint32, seed uint64, steps uint16, back bool) {
		l := Limit{Max: int64(max%1000) + 1, Window: time.Duration(windowMs%86_400_000+1) * time.Millisecond, Algorithm: Algorithm(algo % 4)}
		if l.Validate() != nil {
			return
		}
		r := rand.New(rand.NewPCG(seed, uint64(steps)))
		w := l.WindowMillis()
		now := t0 + r.Int64N(3*w)
		s := anyState{algo: l.Algorithm}
		fromZero := seed%2 == 0 // odd seeds start from a random reachable state
		if !fromZero {
			s = randState(r, l, now, back)
		}
		var admitted []int64 // one stamp per committed unit, while time is monotone
		monotone := true
		for i := 0; i < int(steps%2000); i++ {
			now += r.Int64N(w/4 + 2)
			if back && r.IntN(8) == 0 {
				now -= r.Int64N(2 * w)
				monotone = false
			}
			n := int64(1)
			if r.IntN(4) == 0 {
				n = 1 + r.Int64N(l.Max)
			}
			commit := r.IntN(5) != 0
			d := s.decide(l, now, n, commit)
			checkDecision(t, l, d)
			if d.Allowed && commit && monotone {
				for k := int64(0); k < n; k++ {
					admitted = append(admitted, now)
				}
			}
		}
		if fromZero {
			checkAdmitted(t, l, admitted)
		}
	})
}

// checkAdmitted checks the bound of each algorithm on the admitted stamps
// (sorted, as time was monotone).
func checkAdmitted(t *testing.T, l Limit, stamps []int64) {
	t.Helper()
	w := l.WindowMillis()
	switch l.Algorithm {
	case FixedWindow, SlidingWindow:
		perWindow := map[int64]int64{}
		for _, at := range stamps {
			perWindow[floorDiv(at, w)]++
			require.LessOrEqual(t, perWindow[floorDiv(at, w)], l.Max, "%v: more than Max in window %d", l, floorDiv(at, w))
		}
	case SlidingLog, TokenBucket:
		bound := l.Max // the log is exact
		if l.Algorithm == TokenBucket {
			bound += l.Max // a full burst plus one window's refill, exactly Max
		}
		lo := 0
		for hi, at := range stamps {
			for stamps[lo] <= at-w {
				lo++
			}
			require.LessOrEqual(t, int64(hi-lo+1), bound, "%v: %d units in (%d, %d], bound %d", l, hi-lo+1, at-w, at, bound)
		}
	}
}

func checkDecision(t *testing.T, l Limit, d Decision) {
	t.Helper()
	require.GreaterOrEqual(t, d.Remaining, int64(0), "%v: bad decision %+v", l, d)
	require.LessOrEqual(t, d.Remaining, l.Max, "%v: bad decision %+v", l, d)
	require.GreaterOrEqual(t, d.RetryAfter, time.Duration(0), "%v: bad decision %+v", l, d)
	require.GreaterOrEqual(t, d.ResetAfter, time.Duration(0), "%v: bad decision %+v", l, d)
	require.Equal(t, l.Max, d.Limit, "%v: bad decision %+v", l, d)
	require.Equal(t, d.RetryAfter == 0, d.Allowed, "%v: Allowed %v with RetryAfter %v", l, d.Allowed, d.RetryAfter)
}
