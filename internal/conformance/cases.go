package conformance

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// testBoundaryBurst is the article's table A: limit 100 per 60 s, 100
// requests in the last second of window 0 and 100 in the first second of
// window 1.
func testBoundaryBurst(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 100, time.Minute)
	admitted := 0
	for i := 0; i < 100; i++ {
		if allow(t, l, "user:42", epoch.Add(59*time.Second+time.Duration(i)*10*time.Millisecond), 1).Allowed {
			admitted++
		}
	}
	for i := 0; i < 100; i++ {
		if allow(t, l, "user:42", epoch.Add(60*time.Second+time.Duration(i)*10*time.Millisecond), 1).Allowed {
			admitted++
		}
	}
	lo, hi := 100, 105
	if a == core.FixedWindow {
		lo, hi = 200, 200
	}
	if a == core.SlidingLog {
		hi = 100
	}
	if admitted < lo || admitted > hi {
		t.Fatalf("%s admitted %d of the boundary burst, want %d..%d", a, admitted, lo, hi)
	}
	t.Logf("%s admitted %d of 200 (limit 100)", a, admitted)
}

func testWeighted(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 100, time.Minute)
	now := epoch.Add(time.Second)
	for i := 0; i < 10; i++ {
		if d := allow(t, l, "w", now, 10); !d.Allowed || d.Remaining != int64(90-10*i) {
			t.Fatalf("request %d of weight 10: %+v, want allowed with remaining %d", i, d, 90-10*i)
		}
	}
	if d := allow(t, l, "w", now, 1); d.Allowed || d.RetryAfter <= 0 {
		t.Fatalf("unit request past the limit: %+v, want denied with RetryAfter > 0", d)
	}
	l2 := build(t, b, a, 100, time.Minute)
	allow(t, l2, "w", now, 95)
	if d := allow(t, l2, "w", now, 6); d.Allowed {
		t.Fatalf("weight 6 with 5 left was allowed: %+v", d)
	}
	if d := allow(t, l2, "w", now, 5); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("weight 5 with 5 left: %+v, want allowed, remaining 0", d)
	}
}

func testExpiry(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 10, time.Second)
	now := epoch.Add(100 * time.Millisecond)
	allow(t, l, "e", now, 10)
	if d := peek(t, l, "e", now); d.Allowed || d.ResetAfter <= 0 {
		t.Fatalf("after spending all: peek %+v, want denied with ResetAfter > 0", d)
	}
	d := peek(t, l, "e", now)
	later := now.Add(d.ResetAfter)
	if p := peek(t, l, "e", later); !p.Allowed || p.Remaining != 10 {
		t.Fatalf("after ResetAfter=%s: peek %+v, want full quota 10", d.ResetAfter, p)
	}
}

func testPeek(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 5, time.Minute)
	now := epoch.Add(time.Second)
	for i := 0; i < 10; i++ {
		if d := peek(t, l, "p", now); !d.Allowed || d.Remaining != 5 {
			t.Fatalf("peek %d on a fresh key: %+v, want allowed with remaining 5", i, d)
		}
	}
	allow(t, l, "p", now, 2)
	if d := peek(t, l, "p", now); d.Remaining != 3 {
		t.Fatalf("peek after spending 2 of 5: remaining %d, want 3", d.Remaining)
	}
}

func testReset(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 3, time.Minute)
	now := epoch.Add(time.Second)
	allow(t, l, "r", now, 3)
	allow(t, l, "other", now, 3)
	if err := l.Reset(ctx, "r"); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if d := allow(t, l, "r", now, 3); !d.Allowed {
		t.Fatalf("after Reset the full quota was denied: %+v", d)
	}
	if d := peek(t, l, "other", now); d.Allowed {
		t.Fatalf("Reset of one key freed another: %+v", d)
	}
}

// testRetryAfter checks that a denied request passes once RetryAfter has
// elapsed, over a varied history.
func testRetryAfter(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 20, 10*time.Second)
	now := epoch.Add(3 * time.Second)
	for step := 0; step < 40; step++ {
		d := allow(t, l, "ra", now, 3)
		if !d.Allowed {
			if d.RetryAfter <= 0 {
				t.Fatalf("step %d: denied with RetryAfter %s", step, d.RetryAfter)
			}
			now = now.Add(d.RetryAfter)
			if p := peek(t, l, "ra", now); p.Remaining < 3 {
				t.Fatalf("step %d: after RetryAfter only %d remain, want ≥ 3", step, p.Remaining)
			}
			if d2 := allow(t, l, "ra", now, 3); !d2.Allowed {
				t.Fatalf("step %d: denied again after waiting RetryAfter=%s: %+v", step, d.RetryAfter, d2)
			}
		}
		now = now.Add(time.Duration(step%7) * 150 * time.Millisecond)
	}
}

var trickyKeys = []string{
	"a", "a}", "{a}", "{a", "a:b", "a\x00", "a\x00b", "\xff\xfe", "é", "e\u0301",
	" a", "a ", "}{", "el:{a}:s", strings.Repeat("k", core.MaxKeyLen),
}

func testDistinct(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 2, time.Minute)
	now := epoch.Add(time.Second)
	for _, k := range trickyKeys {
		if d := allow(t, l, k, now, 2); !d.Allowed {
			t.Fatalf("key %q started with a spent quota: %+v (shares state with another key)", k, d)
		}
	}
	for _, k := range trickyKeys {
		if d := peek(t, l, k, now); d.Remaining != 0 {
			t.Fatalf("key %q: remaining %d after spending 2, want 0", k, d.Remaining)
		}
	}
}

// testAtomicity: 64 goroutines × 50 requests on one key at one instant with
// a limit of 1000 must admit exactly 1000.
func testAtomicity(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 1000, time.Minute)
	now := epoch.Add(time.Second)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				d, err := l.AllowN(ctx, "hot", now, 1)
				if err != nil {
					t.Errorf("AllowN: %v", err)
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if got := admitted.Load(); got != 1000 {
		t.Fatalf("64×50 concurrent requests, limit 1000: admitted %d", got)
	}
}

func testBadInput(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 10, time.Minute)
	now := epoch.Add(time.Second)
	before := b.Stored(t)
	bad := []struct {
		key  string
		n    int64
		want error
	}{
		{"", 1, core.ErrEmptyKey},
		{strings.Repeat("x", core.MaxKeyLen+1), 1, core.ErrKeyTooLong},
		{strings.Repeat("x", 10<<10), 1, core.ErrKeyTooLong},
		{"k", 0, core.ErrBadWeight},
		{"k", -1, core.ErrBadWeight},
		{"k", 11, core.ErrBadWeight},
	}
	for _, c := range bad {
		_, err := l.AllowN(ctx, c.key, now, c.n)
		if !errors.Is(err, c.want) || !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("AllowN(len %d, n=%d): err %v, want %v matching ErrInvalid", len(c.key), c.n, err, c.want)
		}
	}
	for _, k := range []string{"", strings.Repeat("x", core.MaxKeyLen+1)} {
		if _, err := l.Peek(ctx, k, now); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("Peek(len %d): err %v, want ErrInvalid", len(k), err)
		}
		if err := l.Reset(ctx, k); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("Reset(len %d): err %v, want ErrInvalid", len(k), err)
		}
	}
	if after := b.Stored(t); after != before {
		t.Fatalf("bad input wrote state: %d entries before, %d after", before, after)
	}
}

func testInvalidLimit(t *testing.T, b Backend, a core.Algorithm) {
	for _, lim := range []core.Limit{
		{Max: 0, Window: time.Minute, Algorithm: a},
		{Max: -5, Window: time.Minute, Algorithm: a},
		{Max: 10, Window: 0, Algorithm: a},
		{Max: 10, Window: -time.Second, Algorithm: a},
		{Max: 10, Window: time.Minute, Algorithm: core.Algorithm(200)},
	} {
		if _, err := b.New(t, lim); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("New(%+v): err %v, want ErrInvalid", lim, err)
		}
	}
}
