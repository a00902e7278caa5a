package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLogExact: the log counts the half-open interval (now − window, now].
func TestLogExact(t *testing.T) {
	l := Limit{Max: 3, Window: time.Second, Algorithm: SlidingLog}
	var s LogState
	for _, at := range []int64{100, 400, 900} {
		require.True(t, s.Decide(l, t0+at, 1, true).Allowed, "unit at %d denied", at)
	}
	d := s.Decide(l, t0+1099, 1, true)
	require.False(t, d.Allowed, "at 1099: %+v, want denied with RetryAfter 1ms", d)
	require.Equal(t, time.Millisecond, d.RetryAfter, "at 1099: %+v, want denied with RetryAfter 1ms", d)
	d = s.Decide(l, t0+1100, 1, true)
	require.True(t, d.Allowed, "at 1100 (stamp 100 out): %+v", d)
	require.Equal(t, time.Second, d.ResetAfter, "at 1100 (stamp 100 out): %+v", d)
	require.Len(t, s.Stamps, 3, "log holds %d stamps, want at most Max=3", len(s.Stamps))
}

// TestLogWeightedRetry: a weighted request waits for enough stamps to leave.
func TestLogWeightedRetry(t *testing.T) {
	l := Limit{Max: 4, Window: time.Second, Algorithm: SlidingLog}
	s := LogState{Stamps: []int64{t0 + 10, t0 + 20, t0 + 30, t0 + 40}}
	d := s.Decide(l, t0+500, 3, false)
	// stamps 10,20,30 must leave
	require.False(t, d.Allowed, "%+v, want RetryAfter 530ms", d)
	require.Equal(t, 530*time.Millisecond, d.RetryAfter, "%+v, want RetryAfter 530ms", d)
}

// TestLogOutOfOrder: a stamp older than the newest (clock went back) is
// inserted in order.
func TestLogOutOfOrder(t *testing.T) {
	l := Limit{Max: 5, Window: time.Second, Algorithm: SlidingLog}
	s := LogState{Stamps: []int64{t0 + 10, t0 + 50}}
	s.Decide(l, t0+30, 2, true)
	want := []int64{t0 + 10, t0 + 30, t0 + 30, t0 + 50}
	for i := range want {
		require.Equal(t, want[i], s.Stamps[i], "stamps %v, want %v", s.Stamps, want)
	}
}
