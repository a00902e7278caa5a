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
	require.Len(t, s.Entries, 3, "log holds %d entries, want at most Max=3", len(s.Entries))
	require.Equal(t, int64(3), s.Units, "log %+v", s)
}

// TestLogWeightedRetry: a weighted request waits for enough stamps to leave.
func TestLogWeightedRetry(t *testing.T) {
	l := Limit{Max: 4, Window: time.Second, Algorithm: SlidingLog}
	s := LogState{Entries: []LogEntry{{t0 + 10, 1}, {t0 + 20, 1}, {t0 + 30, 1}, {t0 + 40, 1}}, Units: 4}
	d := s.Decide(l, t0+500, 3, false)
	// stamps 10,20,30 must leave
	require.False(t, d.Allowed, "%+v, want RetryAfter 530ms", d)
	require.Equal(t, 530*time.Millisecond, d.RetryAfter, "%+v, want RetryAfter 530ms", d)
}

// TestLogOutOfOrder: a request older than the newest (clock went back) is
// inserted in order, and one at the time of an entry adds to that entry.
func TestLogOutOfOrder(t *testing.T) {
	l := Limit{Max: 9, Window: time.Second, Algorithm: SlidingLog}
	s := LogState{Entries: []LogEntry{{t0 + 10, 1}, {t0 + 50, 1}}, Units: 2}
	s.Decide(l, t0+30, 2, true)
	s.Decide(l, t0+10, 3, true)
	want := []LogEntry{{t0 + 10, 4}, {t0 + 30, 2}, {t0 + 50, 1}}
	require.Equal(t, want, s.Entries)
	require.Equal(t, int64(7), s.Units, "log %+v", s)
}

// TestLogWeightIsOneEntry: a request of weight n is one entry of the log,
// whatever n.
func TestLogWeightIsOneEntry(t *testing.T) {
	l := Limit{Max: 1_000_000, Window: time.Hour, Algorithm: SlidingLog}
	var s LogState
	d := s.Decide(l, t0, l.Max, true)
	require.True(t, d.Allowed, "%+v", d)
	require.Equal(t, []LogEntry{{t0, l.Max}}, s.Entries, "one request of weight %d", l.Max)
	require.Equal(t, l.Max, s.Units)
}
