package core

import (
	"math/rand/v2"
	"time"
)

// anyState holds the state of any algorithm so one test runs over all four.
type anyState struct {
	algo   Algorithm
	window WindowState
	bucket BucketState
	log    LogState
}

// decide dispatches to the algorithm's Decide.
func (s *anyState) decide(l Limit, now, n int64, commit bool) Decision {
	switch l.Algorithm {
	case FixedWindow:
		return s.window.DecideFixed(l, now, n, commit)
	case SlidingLog:
		return s.log.Decide(l, now, n, commit)
	case TokenBucket:
		return s.bucket.Decide(l, now, n, commit)
	default:
		return s.window.DecideSliding(l, now, n, commit)
	}
}

// clone is a deep copy (the log's stamps included).
func (s anyState) clone() anyState {
	s.log.Entries = append([]LogEntry(nil), s.log.Entries...)
	return s
}

// peekAt is the decision on n units at now on a copy of s.
func (s anyState) peekAt(l Limit, now, n int64) Decision {
	c := s.clone()
	return c.decide(l, now, n, false)
}

// t0 is a round instant (a multiple of every window used), in ms.
const t0 = int64(1_700_006_400_000)

var testWindows = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 7 * time.Millisecond, time.Second,
	1500 * time.Millisecond, time.Minute, time.Hour, 24 * time.Hour,
}

// randLimit draws a valid limit of algorithm a.
func randLimit(r *rand.Rand, a Algorithm) Limit {
	w := testWindows[r.IntN(len(testWindows))]
	if r.IntN(3) == 0 {
		w = time.Duration(1+r.Int64N(100_000)) * time.Millisecond
	}
	maxes := []int64{1, 2, 3, 7, 10, 100, 999, 1000}
	m := maxes[r.IntN(len(maxes))]
	if a == TokenBucket && w.Milliseconds()*1000 < m {
		m = w.Milliseconds() * 1000
	}
	return Limit{Max: m, Window: w, Algorithm: a}
}

// randState draws a state that the algorithm could have reached by time now
// (ms), possibly with a clock that has since gone back by up to one window
// when back is true.
func randState(r *rand.Rand, l Limit, now int64, back bool) anyState {
	w := l.WindowMillis()
	s := anyState{algo: l.Algorithm}
	switch l.Algorithm {
	case SlidingWindow, FixedWindow:
		idx := floorDiv(now, w) - r.Int64N(3)
		if back {
			idx = floorDiv(now, w) + 1
		}
		s.window = WindowState{Index: idx, Cur: r.Int64N(l.Max + 1), Prev: r.Int64N(l.Max + 1)}
	case TokenBucket:
		tau := l.WindowMillis() * 1000 // the burst tolerance: Max intervals
		s.bucket = BucketState{TAT: now*1000 - tau + r.Int64N(2*tau+1), Rem: r.Int64N(l.Max)}
	case SlidingLog:
		top := now
		if back {
			top = now + w - 1
		}
		// Units up to Max in requests of random weight, some of them
		// sharing a time as a clock gone back leaves them.
		for k := r.Int64N(l.Max + 1); k > 0; {
			n := 1 + r.Int64N(k)
			if r.IntN(2) == 0 {
				n = 1
			}
			s.log.Entries = append(s.log.Entries, LogEntry{At: top - 2*w + 1 + r.Int64N(2*w), N: n})
			s.log.Units += n
			k -= n
		}
		sortEntries(s.log.Entries)
	}
	return s
}

func sortEntries(a []LogEntry) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j].At < a[j-1].At; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}
