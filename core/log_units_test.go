package core

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// unitLog is the exact log kept the plain way, one stamp per admitted unit,
// sorted: the reference LogState's entries must decide exactly as.
type unitLog []int64

func (u *unitLog) decide(l Limit, now, n int64, commit bool) Decision {
	w := l.WindowMillis()
	live := (*u)[sort.Search(len(*u), func(i int) bool { return (*u)[i] > now-w }):]
	if commit {
		*u = append(unitLog(nil), live...)
		live = *u
	}
	count := int64(len(live))
	d := Decision{Limit: l.Max, Allowed: count+n <= l.Max}
	if d.Allowed && commit {
		for k := int64(0); k < n; k++ {
			*u = append(*u, now)
		}
		sort.Slice(*u, func(i, j int) bool { return (*u)[i] < (*u)[j] })
		live = *u
		count += n
	}
	if !d.Allowed {
		d.RetryAfter = ms(max(0, live[count+n-l.Max-1]+w-now))
	}
	d.Remaining = max(0, l.Max-count)
	if count > 0 {
		d.ResetAfter = ms(max(0, live[count-1]+w-now))
	}
	return d
}

// TestLogAgreesWithUnitLog: over random histories of weighted requests and
// peeks, with time moving forward, standing still and going back, LogState
// decides exactly as a log of one stamp per unit, keeps Units equal to its
// entries' sum, its entries sorted, and at most one entry per request.
func TestLogAgreesWithUnitLog(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		l := Limit{Max: []int64{1, 3, 10, 100, 1000}[r.IntN(5)], Window: time.Duration(1+r.IntN(2000)) * time.Millisecond, Algorithm: SlidingLog}
		w := l.WindowMillis()
		var s LogState
		var ref unitLog
		now, requests := t0, 0
		for step := 0; step < 400; step++ {
			switch p := r.IntN(100); {
			case p < 20:
			case p < 75:
				now += r.Int64N(w/5 + 1)
			case p < 88:
				now += w + r.Int64N(2*w)
			default:
				now -= r.Int64N(w + 1)
			}
			n := int64(1)
			if r.IntN(2) == 0 {
				n = 1 + r.Int64N(l.Max)
			}
			commit := r.IntN(100) < 85
			want := ref.decide(l, now, n, commit)
			got := s.Decide(l, now, n, commit)
			require.Equal(t, want, got, "seed %d step %d %v now=%d n=%d commit=%v", seed, step, l, now, n, commit)
			if got.Allowed && commit {
				requests++
			}
			require.Equal(t, sumUnits(s.Entries), s.Units, "seed %d step %d: %+v", seed, step, s)
			require.True(t, sort.SliceIsSorted(s.Entries, func(i, j int) bool { return s.Entries[i].At < s.Entries[j].At }), "seed %d step %d: %+v", seed, step, s)
			require.LessOrEqual(t, len(s.Entries), requests, "seed %d step %d: more entries than requests admitted", seed, step)
		}
	}
}
