package truth

import (
	"testing"
	"time"

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
	if r.Allowed != 100 || r.FalseAllows != 0 || r.FalseDenies != 0 || r.MaxOveradmission != 1 {
		t.Fatalf("exact log: %+v, want 100 allowed, no errors, over-admission 1", r)
	}
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
	if r.Allowed != 200 || r.FalseAllows != 100 || r.FalseDenies != 0 || r.MaxOveradmission != 2 {
		t.Fatalf("fixed window: %+v, want 200 allowed, 100 false allows, over-admission 2", r)
	}
	if got := r.ErrorPct(); got != 50 {
		t.Fatalf("error %% = %v, want 50", got)
	}
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
		if got := j.Observe(s.k, s.t, s.n, s.allowed); got != s.right {
			t.Fatalf("%s: right-to-allow = %v, want %v", s.why, got, s.right)
		}
	}
	r := j.Result()
	if r.Decisions != 6 || r.Allowed != 3 || r.Denied != 3 || r.FalseAllows != 1 || r.FalseDenies != 2 {
		t.Fatalf("tally %+v, want 6 decisions, 3/3, 1 false allow, 2 false denies", r.Tally)
	}
	if r.MaxOveradmission != 1.5 {
		t.Fatalf("max over-admission %v, want 1.5 (3 units in a window of limit 2)", r.MaxOveradmission)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	if p := Percentile(xs, 99); p != 99 {
		t.Fatalf("p99 of 1..100 = %v, want 99", p)
	}
	if p := Percentile(xs, 100); p != 100 {
		t.Fatalf("p100 = %v", p)
	}
	if p := Percentile(nil, 99); p != 0 {
		t.Fatalf("empty = %v", p)
	}
}
