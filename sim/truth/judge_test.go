package truth

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/edgelimit/edgelimit/core"
)

const minute = 60_000 // ms

// boundaryBurst is the article's trace: 100 requests in the last second of
// window 0 and 100 in the first second of window 1, limit 100 per 60 s.
func boundaryBurst() []int64 {
	var ts []int64
	for i := range int64(100) {
		ts = append(ts, minute-1000+i*10)
	}
	for i := range int64(100) {
		ts = append(ts, minute+i*10)
	}
	return ts
}

func TestExactLogAdmitsExactlyTheLimit(t *testing.T) {
	l := core.Limit{Max: 100, Window: time.Minute, Algorithm: core.SlidingLog}
	var s core.LogState
	j := New[string](100, time.Minute)
	for _, ts := range boundaryBurst() {
		d := s.Decide(l, ts, 1, true)
		j.Observe("k", ts, 1, d.Allowed)
	}
	r := j.Result()
	assert.EqualValues(t, 100, r.Allowed, "exact log: %+v, want 100 allowed", r)
	assert.Zero(t, r.FalseAllows, "exact log: %+v, want no false allow", r)
	assert.Zero(t, r.FalseDenies, "exact log: %+v, want no false deny", r)
	assert.Equal(t, 1.0, r.MaxOveradmission, "exact log: %+v, want over-admission 1", r)
}

func TestFixedWindowAdmitsTwiceAtTheBoundary(t *testing.T) {
	l := core.Limit{Max: 100, Window: time.Minute, Algorithm: core.FixedWindow}
	var s core.WindowState
	j := New[string](100, time.Minute)
	for _, ts := range boundaryBurst() {
		d := s.DecideFixed(l, ts, 1, true)
		j.Observe("k", ts, 1, d.Allowed)
	}
	r := j.Result()
	assert.EqualValues(t, 200, r.Allowed, "fixed window: %+v, want 200 allowed", r)
	assert.EqualValues(t, 100, r.FalseAllows, "fixed window: %+v, want 100 false allows", r)
	assert.Zero(t, r.FalseDenies, "fixed window: %+v, want no false deny", r)
	assert.Equal(t, 2.0, r.MaxOveradmission, "fixed window: %+v, want over-admission 2", r)
	assert.Equal(t, 50.0, r.ErrorPct(), "error %%, want 50")
}

func TestTinyTraceCountsFalseAllowsAndDenies(t *testing.T) {
	j := New[int](2, 10*time.Millisecond)
	steps := []struct {
		k       int
		t, n    int64
		allowed bool
		right   bool // the exact log says allow
		why     string
	}{
		{1, 0, 1, true, true, "empty log"},
		{1, 1, 1, true, true, "1 unit held"},
		{1, 2, 1, true, false, "2 units held: a false allow"},
		{1, 3, 1, false, false, "3 units held: a right deny"},
		{2, 3, 2, false, true, "another identity, empty: a false deny"},
		{1, 11, 1, false, true, "(1,11] holds only t=2: a false deny"},
	}
	for _, s := range steps {
		require.Equal(t, s.right, j.Observe(s.k, s.t, s.n, s.allowed), "%s: right-to-allow", s.why)
	}
	r := j.Result()
	assert.Equal(t, Tally{Decisions: 6, Allowed: 3, Denied: 3, FalseAllows: 1, FalseDenies: 2, Units: 3}, r.Tally,
		"tally: want 6 decisions, 3/3, 1 false allow, 2 false denies")
	assert.Equal(t, 1.5, r.MaxOveradmission, "max over-admission, want 1.5 (3 units in a window of limit 2)")
}

func TestPercentileNearestRank(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	assert.Equal(t, 99.0, Percentile(xs, 99), "p99 of 1..100")
	assert.Equal(t, 100.0, Percentile(xs, 100), "p100 of 1..100")
	assert.Equal(t, 0.0, Percentile(nil, 99), "p99 of nothing")
}
