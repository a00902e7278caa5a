package conformance

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
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
	require.GreaterOrEqual(t, admitted, lo, "%s admitted %d of the boundary burst, want %d..%d", a, admitted, lo, hi)
	require.LessOrEqual(t, admitted, hi, "%s admitted %d of the boundary burst, want %d..%d", a, admitted, lo, hi)
	t.Logf("%s admitted %d of 200 (limit 100)", a, admitted)
}

func testWeighted(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 100, time.Minute)
	now := epoch.Add(time.Second)
	for i := 0; i < 10; i++ {
		d := allow(t, l, "w", now, 10)
		require.True(t, d.Allowed, "request %d of weight 10: %+v, want allowed with remaining %d", i, d, 90-10*i)
		require.Equal(t, int64(90-10*i), d.Remaining, "request %d of weight 10: %+v, want allowed with remaining %d", i, d, 90-10*i)
	}
	d := allow(t, l, "w", now, 1)
	require.False(t, d.Allowed, "unit request past the limit: %+v, want denied with RetryAfter > 0", d)
	require.Greater(t, d.RetryAfter, time.Duration(0), "unit request past the limit: %+v, want denied with RetryAfter > 0", d)
	l2 := build(t, b, a, 100, time.Minute)
	allow(t, l2, "w", now, 95)
	d = allow(t, l2, "w", now, 6)
	require.False(t, d.Allowed, "weight 6 with 5 left was allowed: %+v", d)
	d = allow(t, l2, "w", now, 5)
	require.True(t, d.Allowed, "weight 5 with 5 left: %+v, want allowed, remaining 0", d)
	require.Equal(t, int64(0), d.Remaining, "weight 5 with 5 left: %+v, want allowed, remaining 0", d)
}

func testExpiry(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 10, time.Second)
	now := epoch.Add(100 * time.Millisecond)
	allow(t, l, "e", now, 10)
	d := peek(t, l, "e", now)
	require.False(t, d.Allowed, "after spending all: peek %+v, want denied with ResetAfter > 0", d)
	require.Positive(t, d.ResetAfter, "after spending all: peek %+v, want denied with ResetAfter > 0", d)
	later := now.Add(d.ResetAfter)
	p := peek(t, l, "e", later)
	require.True(t, p.Allowed, "after ResetAfter=%s: peek %+v, want full quota 10", d.ResetAfter, p)
	require.Equal(t, int64(10), p.Remaining, "after ResetAfter=%s: peek %+v, want full quota 10", d.ResetAfter, p)
}

func testPeek(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 5, time.Minute)
	now := epoch.Add(time.Second)
	for i := 0; i < 10; i++ {
		d := peek(t, l, "p", now)
		require.True(t, d.Allowed, "peek %d on a fresh key: %+v, want allowed with remaining 5", i, d)
		require.Equal(t, int64(5), d.Remaining, "peek %d on a fresh key: %+v, want allowed with remaining 5", i, d)
	}
	allow(t, l, "p", now, 2)
	d := peek(t, l, "p", now)
	require.Equal(t, int64(3), d.Remaining, "peek after spending 2 of 5: remaining %d, want 3", d.Remaining)
}

// testPeekN: PeekN of n units at an instant decides as AllowN of n units
// at that instant then does (allowed or not, the same RetryAfter when
// denied), counting nothing: its Remaining is the quota before spending,
// n more than AllowN's when allowed, the same when denied. Over a history
// of weights 1 to Max at instants inside a window, at its end and past it.
// It catches PeekN deciding one unit (an early RetryAfter) or counting.
func testPeekN(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 10, time.Minute)
	pn, ok := l.(core.PeekerN)
	require.True(t, ok, "%s: core.PeekerN not implemented", b.Name)
	steps := []struct {
		at time.Duration
		n  int64
	}{{time.Second, 4}, {time.Second, 7}, {2 * time.Second, 3}, {2 * time.Second, 3}, {2 * time.Second, 1},
		{59 * time.Second, 10}, {61 * time.Second, 6}, {61 * time.Second, 2}, {90 * time.Second, 9},
		{90 * time.Second, 5}, {150 * time.Second, 10}, {150 * time.Second, 1}}
	var allowed, denied int
	for i, s := range steps {
		now := epoch.Add(s.at)
		p, err := pn.PeekN(ctx, "pn", now, s.n)
		require.NoError(t, err, "step %d: PeekN(%d)", i, s.n)
		d := allow(t, l, "pn", now, s.n)
		require.Equal(t, d.Allowed, p.Allowed, "step %d at %s, %d units: PeekN %+v, AllowN %+v", i, s.at, s.n, p, d)
		if d.Allowed {
			allowed++
			require.Equal(t, d.Remaining+s.n, p.Remaining, "step %d at %s, %d units: PeekN %+v, AllowN %+v", i, s.at, s.n, p, d)
			continue
		}
		denied++
		require.Equal(t, d.RetryAfter, p.RetryAfter, "step %d at %s, %d units: PeekN %+v, AllowN %+v", i, s.at, s.n, p, d)
		require.Equal(t, d.Remaining, p.Remaining, "step %d at %s, %d units: PeekN %+v, AllowN %+v", i, s.at, s.n, p, d)
	}
	require.NotZero(t, allowed, "the history allowed nothing")
	require.NotZero(t, denied, "the history denied nothing")
	_, err := pn.PeekN(ctx, "pn", epoch, 11)
	require.ErrorIs(t, err, core.ErrBadWeight, "PeekN of Max+1 units")
	_, err = pn.PeekN(ctx, "pn", epoch, 0)
	require.ErrorIs(t, err, core.ErrBadWeight, "PeekN of 0 units")
}

func testReset(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 3, time.Minute)
	now := epoch.Add(time.Second)
	allow(t, l, "r", now, 3)
	allow(t, l, "other", now, 3)
	err := l.Reset(ctx, "r")
	require.NoError(t, err, "Reset")
	d := allow(t, l, "r", now, 3)
	require.True(t, d.Allowed, "after Reset the full quota was denied: %+v", d)
	d = peek(t, l, "other", now)
	require.False(t, d.Allowed, "Reset of one key freed another: %+v", d)
}

// testRetryAfter checks that a denied request passes once RetryAfter has
// elapsed, over a varied history.
func testRetryAfter(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 20, 10*time.Second)
	now := epoch.Add(3 * time.Second)
	for step := 0; step < 40; step++ {
		d := allow(t, l, "ra", now, 3)
		if !d.Allowed {
			require.Greater(t, d.RetryAfter, time.Duration(0), "step %d: denied with RetryAfter %s", step, d.RetryAfter)
			now = now.Add(d.RetryAfter)
			p := peek(t, l, "ra", now)
			require.GreaterOrEqual(t, p.Remaining, int64(3), "step %d: after RetryAfter only %d remain, want ≥ 3", step, p.Remaining)
			d2 := allow(t, l, "ra", now, 3)
			require.True(t, d2.Allowed, "step %d: denied again after waiting RetryAfter=%s: %+v", step, d.RetryAfter, d2)
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
		d := allow(t, l, k, now, 2)
		require.True(t, d.Allowed, "key %q started with a spent quota: %+v (shares state with another key)", k, d)
	}
	for _, k := range trickyKeys {
		d := peek(t, l, k, now)
		require.Equal(t, int64(0), d.Remaining, "key %q: remaining %d after spending 2, want 0", k, d.Remaining)
	}
}

// AtomicityInFlight bounds how many of testAtomicity's calls are in flight
// at once: enough to race (and to fill a pipelining batch), few enough that
// no call queues behind thousands of others on a loaded machine.
const AtomicityInFlight = 16

// testAtomicity: 64 goroutines × 50 requests on one key at one instant with
// a limit of 1000 must admit exactly 1000. The work is bounded, not the
// time: at most AtomicityInFlight calls run at once, every call must
// complete (a backend under test is built with no deadline shorter than a
// hang), and a failed call is counted by kind and reported, since a call
// that failed after Redis ran it may have spent a unit nobody saw.
func testAtomicity(t *testing.T, b Backend, a core.Algorithm) {
	l := build(t, b, a, 1000, time.Minute)
	now := epoch.Add(time.Second)
	var admitted, unavailable, other atomic.Int64
	var firstErr atomic.Pointer[error]
	sem := make(chan struct{}, AtomicityInFlight)
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				sem <- struct{}{}
				d, err := l.AllowN(ctx, "hot", now, 1)
				<-sem
				switch {
				case errors.Is(err, core.ErrUnavailable):
					unavailable.Add(1)
				case err != nil:
					other.Add(1)
				case d.Allowed:
					admitted.Add(1)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, &err)
				}
			}
		}()
	}
	wg.Wait()
	var first error
	if p := firstErr.Load(); p != nil {
		first = *p
	}
	require.Zero(t, unavailable.Load()+other.Load(), "64×50 concurrent requests: %d failed with core.ErrUnavailable (the store did not answer within the limiter's timeout), %d with another error; first: %v", unavailable.Load(), other.Load(), first)
	require.Equal(t, int64(1000), admitted.Load(), "64×50 concurrent requests (%d in flight at most), limit 1000: admitted %d", AtomicityInFlight, admitted.Load())
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
		require.ErrorIs(t, err, c.want, "AllowN(len %d, n=%d): err %v, want %v matching ErrInvalid", len(c.key), c.n, err, c.want)
		require.ErrorIs(t, err, core.ErrInvalid, "AllowN(len %d, n=%d): err %v, want %v matching ErrInvalid", len(c.key), c.n, err, c.want)
	}
	for _, k := range []string{"", strings.Repeat("x", core.MaxKeyLen+1)} {
		_, err := l.Peek(ctx, k, now)
		require.ErrorIs(t, err, core.ErrInvalid, "Peek(len %d): err %v, want ErrInvalid", len(k), err)
		err = l.Reset(ctx, k)
		require.ErrorIs(t, err, core.ErrInvalid, "Reset(len %d): err %v, want ErrInvalid", len(k), err)
	}
	after := b.Stored(t)
	require.Equal(t, before, after, "bad input wrote state: %d entries before, %d after", before, after)
}

func testInvalidLimit(t *testing.T, b Backend, a core.Algorithm) {
	for _, lim := range []core.Limit{
		{Max: 0, Window: time.Minute, Algorithm: a},
		{Max: -5, Window: time.Minute, Algorithm: a},
		{Max: 10, Window: 0, Algorithm: a},
		{Max: 10, Window: -time.Second, Algorithm: a},
		{Max: 10, Window: time.Minute, Algorithm: core.Algorithm(200)},
	} {
		_, err := b.New(t, lim)
		require.ErrorIs(t, err, core.ErrInvalid, "New(%+v): err %v, want ErrInvalid", lim, err)
	}
}
