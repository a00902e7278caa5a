package core

import (
	"math"
	"time"
)

// WindowState is the per-identity state of the fixed window and the sliding
// window counter: 24 bytes. Index is the window number (now / window) that
// Cur counts; Prev counts window Index-1. The zero value is an empty state.
type WindowState struct {
	Index int64
	Cur   int64
	Prev  int64
}

// Roll brings the state to window idx: one window on shifts Cur into Prev,
// two or more clears both. A window older than Index (a clock that went
// backwards) leaves the state as it is; callers then count the request in
// the newer window Index.
func (s *WindowState) Roll(idx int64) {
	switch {
	case idx <= s.Index:
		return
	case idx == s.Index+1:
		s.Prev, s.Cur = s.Cur, 0
	default:
		s.Prev, s.Cur = 0, 0
	}
	s.Index = idx
}

// windowPos returns the window number of now and the milliseconds elapsed in
// it. When now lies before the state's window (a clock that went back), the
// position is clamped to the start of the state's window and lag is how many
// ms now lies before that start; lag is 0 otherwise. Durations computed from
// the clamped position (RetryAfter, ResetAfter) add lag, so they stay true
// for the caller's clock.
func (s *WindowState) windowPos(w, now int64) (idx, elapsed, lag int64) {
	// Still in the state's window: no division. The difference is taken
	// unsigned so it cannot wrap (now near MaxInt64, start negative).
	if start := s.Index * w; now >= start && uint64(now)-uint64(start) < uint64(w) {
		return s.Index, now - start, 0
	}
	idx = floorDiv(now, w)
	if idx < s.Index {
		return s.Index, 0, s.Index*w - now
	}
	return idx, now - idx*w, 0
}

// SlidingEstimate is Cloudflare's estimate of the units counted in the last
// window: cur + prev × (window − elapsed) / window, in float64 with exactly
// the operation order of the Lua scripts so every backend agrees bit for bit.
// Its domain is window > 0 and 0 ≤ elapsed ≤ window, as windowPos gives.
func SlidingEstimate(cur, prev, elapsed, window int64) float64 {
	if prev == 0 {
		return float64(cur) // the same bits: the product and quotient are +0
	}
	return float64(cur) + float64(prev)*float64(window-elapsed)/float64(window)
}

// SlidingAdmits reports whether n more units fit under max given estimate:
// estimate < max − n + 1, the article's "estimate < limit" generalised to
// weighted requests.
func SlidingAdmits(estimate float64, max, n int64) bool {
	return estimate < float64(max-n+1)
}

// SlidingRemaining is how many single units would still pass: ceil(max − estimate), at least 0.
func SlidingRemaining(estimate float64, max int64) int64 {
	r := math.Ceil(float64(max) - estimate)
	if r < 0 {
		return 0
	}
	return int64(r)
}

// SlidingRetryMillis is, for a request of n units (1 ≤ n ≤ max) with counts
// cur and prev at elapsed ms into a window of w ms, the milliseconds until
// it would pass if nothing else is counted: 0 when it passes now (counts
// that are one view of several, where another place denied it).
func SlidingRetryMillis(cur, prev, elapsed, w, max, n int64) int64 {
	room := float64(max - n + 1)
	if float64(cur) < room {
		if prev == 0 {
			return 0 // cur alone leaves room: it passes now
		}
		// prev × (w − e) / w < room − cur  ⇔  e > w − (room − cur) × w / prev
		x := float64(w) - (room-float64(cur))*float64(w)/float64(prev)
		return maxInt(0, int64(math.Floor(x))+1-elapsed)
	}
	// Next window: cur becomes prev.
	x := float64(w) - room*float64(w)/float64(cur)
	return w - elapsed + maxInt(0, int64(math.Floor(x))+1)
}

// SlidingResetMillis is the milliseconds until both counters have slid out.
func SlidingResetMillis(cur, prev, elapsed, w int64) int64 {
	switch {
	case cur > 0:
		return 2*w - elapsed
	case prev > 0:
		return w - elapsed
	}
	return 0
}

// DecideSliding applies the sliding window counter to n units at now (ms):
// when commit is true and the units fit, they are counted. With commit false
// nothing changes and Remaining is the quota before spending (a peek).
func (s *WindowState) DecideSliding(l Limit, now, n int64, commit bool) Decision {
	w := l.WindowMillis()
	idx, elapsed, lag := s.windowPos(w, now)
	st := *s
	st.Roll(idx)
	est := SlidingEstimate(st.Cur, st.Prev, elapsed, w)
	d := Decision{Limit: l.Max, Allowed: SlidingAdmits(est, l.Max, n)}
	if d.Allowed && commit {
		st.Cur += n
		est += float64(n)
		*s = st
	}
	if !d.Allowed {
		d.RetryAfter = ms(lag + SlidingRetryMillis(st.Cur, st.Prev, elapsed, w, l.Max, n))
	}
	d.Remaining = SlidingRemaining(est, l.Max)
	if reset := SlidingResetMillis(st.Cur, st.Prev, elapsed, w); reset > 0 {
		d.ResetAfter = ms(lag + reset)
	}
	return d
}

// DecideFixed applies the fixed window to n units at now (ms), with the same
// commit rule as DecideSliding. Prev is kept but not used.
func (s *WindowState) DecideFixed(l Limit, now, n int64, commit bool) Decision {
	w := l.WindowMillis()
	idx, elapsed, lag := s.windowPos(w, now)
	st := *s
	st.Roll(idx)
	d := Decision{Limit: l.Max, Allowed: st.Cur+n <= l.Max}
	if d.Allowed && commit {
		st.Cur += n
		*s = st
	}
	if !d.Allowed {
		d.RetryAfter = ms(lag + w - elapsed)
	}
	d.Remaining = maxInt(0, l.Max-st.Cur)
	if st.Cur > 0 {
		d.ResetAfter = ms(lag + w - elapsed)
	}
	return d
}

// ms converts v milliseconds to a Duration, saturating at the largest one
// (a request stamped centuries before its state's window has a lag past
// Duration's range).
func ms(v int64) time.Duration { return MillisDuration(v) }

// MillisDuration converts v milliseconds to a Duration, saturating at
// math.MaxInt64 and math.MinInt64 instead of wrapping.
func MillisDuration(v int64) time.Duration {
	const per = int64(time.Millisecond)
	switch {
	case v > math.MaxInt64/per:
		return math.MaxInt64
	case v < math.MinInt64/per:
		return math.MinInt64
	}
	return time.Duration(v) * time.Millisecond
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
