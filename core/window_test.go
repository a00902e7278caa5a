package core

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlidingEstimateFormula: cur + prev × (window − elapsed) / window.
func TestSlidingEstimateFormula(t *testing.T) {
	cases := []struct {
		cur, prev, elapsed, w int64
		want                  float64
	}{
		{0, 0, 0, 60_000, 0},
		{5, 100, 0, 60_000, 105},     // elapsed 0: the whole previous window counts
		{5, 100, 30_000, 60_000, 55}, // half way: half of it
		{5, 100, 59_999, 60_000, 5 + 100.0/60_000},
		{0, 100, 1_000, 60_000, 100 * 59_000.0 / 60_000},
		{7, 0, 123, 1_000, 7},
		{0, 3, 1, 2, 1.5},
	}
	for _, c := range cases {
		got := SlidingEstimate(c.cur, c.prev, c.elapsed, c.w)
		assert.Equal(t, c.want, got, "SlidingEstimate(%d, %d, %d, %d) = %v, want %v", c.cur, c.prev, c.elapsed, c.w, got, c.want)
	}
}

// TestRoll: same window keeps, one window on shifts cur into prev, two or
// more clear, an older window (clock went back) changes nothing.
func TestRoll(t *testing.T) {
	base := WindowState{Index: 10, Cur: 4, Prev: 9}
	cases := []struct {
		idx  int64
		want WindowState
	}{
		{10, base},
		{11, WindowState{Index: 11, Cur: 0, Prev: 4}},
		{12, WindowState{Index: 12}},
		{1000, WindowState{Index: 1000}},
		{9, base},
		{-5, base},
	}
	for _, c := range cases {
		s := base
		s.Roll(c.idx)
		assert.Equal(t, c.want, s, "Roll(%d) = %+v, want %+v", c.idx, s, c.want)
	}
}

// TestSlidingDecisions walks the window edge cases through DecideSliding.
func TestSlidingDecisions(t *testing.T) {
	l := PerWindow(10, time.Second)
	// Window 5 holds 10: at elapsed 0 of window 6 the estimate is 10, denied.
	s := WindowState{Index: 5, Cur: 10}
	d := s.DecideSliding(l, 6000, 1, true)
	require.False(t, d.Allowed, "elapsed 0 after a full window: %+v, state %+v", d, s)
	require.Equal(t, int64(5), s.Index, "elapsed 0 after a full window: %+v, state %+v", d, s)
	// 1ms later the estimate is 10 × 999/1000 = 9.99 < 10: admitted, and the
	// roll by one is committed.
	d = s.DecideSliding(l, 6001, 1, true)
	require.True(t, d.Allowed, "elapsed 1: %+v, state %+v", d, s)
	require.Equal(t, WindowState{Index: 6, Cur: 1, Prev: 10}, s, "elapsed 1: %+v, state %+v", d, s)
	// Two windows on, both counters are gone: the full quota.
	d = s.DecideSliding(l, 8000, 10, true)
	require.True(t, d.Allowed, "roll by two: %+v, state %+v", d, s)
	require.Equal(t, WindowState{Index: 8, Cur: 10}, s, "roll by two: %+v, state %+v", d, s)
	// A clock that went back to window 7 is counted in window 8 at elapsed 0.
	d = s.DecideSliding(l, 7500, 1, true)
	require.False(t, d.Allowed, "clock back, window full: %+v", d)
}

// TestSlidingClockBackDurations: with now before the state's window, the
// decision is the one at the start of that window and the durations count
// from now.
func TestSlidingClockBackDurations(t *testing.T) {
	l := PerWindow(10, time.Second)
	s := WindowState{Index: 8, Cur: 10}
	d := s.DecideSliding(l, 7500, 1, false)
	// At 8000 (elapsed 0 of window 8) the estimate is 10; in window 9 it is
	// 10 × (1000−e)/1000 < 10 from e = 1: retry at 9001, that is 1501ms on.
	require.False(t, d.Allowed, "RetryAfter = %v, want 1.501s (%+v)", d.RetryAfter, d)
	require.Equal(t, 1501*time.Millisecond, d.RetryAfter, "RetryAfter = %v, want 1.501s (%+v)", d.RetryAfter, d)
	require.Equal(t, 2500*time.Millisecond, d.ResetAfter, "ResetAfter = %v, want 2.5s", d.ResetAfter)
	f := s.DecideFixed(Limit{Max: 10, Window: time.Second, Algorithm: FixedWindow}, 7500, 1, false)
	require.False(t, f.Allowed, "fixed with clock back: %+v, want retry and reset 1.5s", f)
	require.Equal(t, 1500*time.Millisecond, f.RetryAfter, "fixed with clock back: %+v, want retry and reset 1.5s", f)
	require.Equal(t, 1500*time.Millisecond, f.ResetAfter, "fixed with clock back: %+v, want retry and reset 1.5s", f)
}

// TestSlidingWeightedBoundary: n units pass exactly when est < max − n + 1.
func TestSlidingWeightedBoundary(t *testing.T) {
	l := PerWindow(10, time.Second)
	for n := int64(1); n <= 10; n++ {
		for cur := int64(0); cur <= 10; cur++ {
			s := WindowState{Index: 3, Cur: cur}
			want := cur+n <= 10 // est = cur here: est < 10 − n + 1 ⇔ cur + n ≤ 10
			got := s.DecideSliding(l, 3500, n, false).Allowed
			require.Equal(t, want, got, "cur %d n %d: allowed %v, want %v", cur, n, got, want)
		}
	}
	// A fractional estimate: cur 2, prev 5 at half the window is 4.5, so 6
	// units need 4.5 < 5 (yes) and 7 units 4.5 < 4 (no).
	s := WindowState{Index: 3, Cur: 2, Prev: 5}
	require.True(t, s.DecideSliding(l, 3500, 6, false).Allowed, "fractional weighted boundary wrong")
	require.False(t, s.DecideSliding(l, 3500, 7, false).Allowed, "fractional weighted boundary wrong")
	require.False(t, SlidingAdmits(4, 10, 7), "SlidingAdmits boundary")
	require.True(t, SlidingAdmits(3.999, 10, 7), "SlidingAdmits boundary")
}

// TestSlidingRemaining: ceil(max − estimate), never negative.
func TestSlidingRemaining(t *testing.T) {
	cases := []struct {
		est  float64
		want int64
	}{{0, 10}, {9.5, 1}, {9, 1}, {10, 0}, {12.5, 0}, {0.01, 10}}
	for _, c := range cases {
		got := SlidingRemaining(c.est, 10)
		assert.Equal(t, c.want, got, "SlidingRemaining(%v, 10) = %d, want %d", c.est, got, c.want)
	}
}

// TestFixedWindowDecisions: count per window number, reset at the boundary.
func TestFixedWindowDecisions(t *testing.T) {
	l := Limit{Max: 3, Window: time.Second, Algorithm: FixedWindow}
	var s WindowState
	for i := 0; i < 3; i++ {
		d := s.DecideFixed(l, 4200, 1, true)
		require.True(t, d.Allowed, "unit %d: %+v", i, d)
		require.Equal(t, int64(2-i), d.Remaining, "unit %d: %+v", i, d)
		require.Equal(t, 800*time.Millisecond, d.ResetAfter, "unit %d: %+v", i, d)
	}
	d := s.DecideFixed(l, 4999, 1, true)
	require.False(t, d.Allowed, "full window: %+v", d)
	require.Equal(t, time.Millisecond, d.RetryAfter, "full window: %+v", d)
	d = s.DecideFixed(l, 5000, 3, true)
	require.True(t, d.Allowed, "next window: %+v", d)
}

// TestFloorDiv: window numbers round down, also before 1970.
func TestFloorDiv(t *testing.T) {
	cases := [][3]int64{{7, 2, 3}, {-1, 1000, -1}, {-1000, 1000, -1}, {-1001, 1000, -2}, {0, 5, 0}}
	for _, c := range cases {
		got := floorDiv(c[0], c[1])
		assert.Equal(t, c[2], got, "floorDiv(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
	}
}

// TestWindowPosSkipsDivisionExactly: the division-free path for a time in
// the state's own window gives what dividing gives, at and around every
// edge of that window, before 1970 too, for windows of 1 ms up, and where
// now − start would wrap (a state before 1970, now near MaxInt64).
func TestWindowPosSkipsDivisionExactly(t *testing.T) {
	for _, w := range []int64{1, 2, 7, 1000, 60_000} {
		for _, index := range []int64{-3, -1, 0, 1, 28_333_333} {
			start := index * w
			for _, now := range []int64{start - 1, start, start + 1, start + w/2, start + w - 1, start + w, start + w + 1} {
				checkWindowPos(t, w, index, now)
			}
		}
	}
	for _, w := range []int64{1000, 60_000} {
		for _, now := range []int64{math.MaxInt64, math.MaxInt64 - w + 1, math.MinInt64 + w} {
			checkWindowPos(t, w, -1, now)
			checkWindowPos(t, w, floorDiv(math.MinInt64, w)+1, now)
		}
	}
}

// checkWindowPos fails t unless windowPos of a state in window index gives
// for now what dividing gives.
func checkWindowPos(t *testing.T, w, index, now int64) {
	t.Helper()
	s := WindowState{Index: index}
	idx, elapsed, lag := s.windowPos(w, now)
	want := floorDiv(now, w)
	wantElapsed, wantLag := now-want*w, int64(0)
	if want < index {
		want, wantElapsed, wantLag = index, 0, index*w-now
	}
	require.Equal(t, want, idx, "w %d, state window %d, now %d: windowPos = (%d, %d, %d), want (%d, %d, %d)", w, index, now, idx, elapsed, lag, want, wantElapsed, wantLag)
	require.Equal(t, wantElapsed, elapsed, "w %d, state window %d, now %d: windowPos = (%d, %d, %d), want (%d, %d, %d)", w, index, now, idx, elapsed, lag, want, wantElapsed, wantLag)
	require.Equal(t, wantLag, lag, "w %d, state window %d, now %d: windowPos = (%d, %d, %d), want (%d, %d, %d)", w, index, now, idx, elapsed, lag, want, wantElapsed, wantLag)
}

// TestSlidingEstimateWithoutPrevIsTheFormula: skipping the division when
// prev is 0 returns the formula's very bits.
func TestSlidingEstimateWithoutPrevIsTheFormula(t *testing.T) {
	for _, cur := range []int64{0, 1, 99, 1 << 40} {
		for _, elapsed := range []int64{0, 1, 59_999} {
			formula := float64(cur) + float64(0)*float64(60_000-elapsed)/float64(60_000)
			got := SlidingEstimate(cur, 0, elapsed, 60_000)
			require.Equal(t, math.Float64bits(formula), math.Float64bits(got), "SlidingEstimate(%d, 0, %d, 60000) = %v (bits %x), formula %v (bits %x)", cur, elapsed, got, math.Float64bits(got), formula, math.Float64bits(formula))
		}
	}
}

// TestSlidingRetryMillisWhenItFits: counts under which the request passes
// now wait 0, with or without a previous window's count, and every wait
// over a grid of counts is at least 0 and no more than two windows.
// Caught mutation: dividing by a zero prev (a wait of about 2⁶³ ms that
// overflows a time.Duration into a negative Retry-After).
func TestSlidingRetryMillisWhenItFits(t *testing.T) {
	const w, max = 1000, 10
	assert.Zero(t, SlidingRetryMillis(0, 0, 6, w, max, 4), "nothing counted")
	assert.Zero(t, SlidingRetryMillis(3, 0, 500, w, max, 4), "cur alone leaves room")
	assert.Zero(t, SlidingRetryMillis(3, 4, 999, w, max, 4), "prev's weight has decayed enough")
	for cur := int64(0); cur <= 2*max; cur++ {
		for prev := int64(0); prev <= 2*max; prev++ {
			for _, elapsed := range []int64{0, 1, 500, 999} {
				for _, n := range []int64{1, 4, max} {
					r := SlidingRetryMillis(cur, prev, elapsed, w, max, n)
					require.GreaterOrEqual(t, r, int64(0), "cur %d prev %d elapsed %d n %d", cur, prev, elapsed, n)
					require.LessOrEqual(t, r, int64(2*w), "cur %d prev %d elapsed %d n %d", cur, prev, elapsed, n)
					fits := SlidingAdmits(SlidingEstimate(cur, prev, elapsed, w), max, n)
					assert.Equal(t, fits, r == 0, "cur %d prev %d elapsed %d n %d: 0 exactly when it fits now", cur, prev, elapsed, n)
				}
			}
		}
	}
}
