package hybrid

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestCachedDenyLastsExactlyRetryAfter is the exact deny-until: a
// view whose counts (a lower bound of the global ones) put an identity
// over its limit denies locally, with no round trip, until exactly the
// instant its RetryAfter names (solved by core.SlidingRetryMillis, across
// the window roll too), and no longer: one millisecond before it the view
// still denies, at it the request passes. Two cases: units of the current
// window waiting for the roll, and the previous window's weight decaying
// within a window.
func TestCachedDenyLastsExactlyRetryAfter(t *testing.T) {
	e := newEnv(t, false)
	clock := core.NewManualClock(t0)
	const max = 10
	n, err := New(Config{PoP: "pa", Limit: core.PerWindow(max, time.Second), Redis: e.rdb, Clock: clock,
		Resync: -1, Margin: 0.1, Namespace: "until"})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close(context.Background())
	ctx := context.Background()
	admit := func(at time.Time, k int) {
		for range k {
			if d, err := n.AllowN(ctx, "k", at, 1); err != nil || !d.Allowed {
				t.Fatalf("at %v: %+v, %v", at.Sub(t0), d, err)
			}
		}
	}
	check := func(name string, at time.Time, w int64, wantRetry time.Duration) {
		d, err := n.AllowN(ctx, "k", at, w)
		if err != nil || d.Allowed || d.Source != core.SourceCachedDeny || d.RetryAfter != wantRetry {
			t.Fatalf("%s: %+v, %v; want a cached deny with RetryAfter %v", name, d, err, wantRetry)
		}
		trips := n.Stats().RedisRoundTrips
		until := at.Add(d.RetryAfter)
		for ms := at; ms.Before(until); ms = ms.Add(time.Millisecond) {
			if d, err := n.AllowN(ctx, "k", ms, w); err != nil || d.Allowed || d.Source != core.SourceCachedDeny {
				t.Fatalf("%s: at %v, before RetryAfter ends at %v: %+v, %v", name, ms.Sub(t0), until.Sub(t0), d, err)
			}
		}
		if got := n.Stats().RedisRoundTrips; got != trips {
			t.Fatalf("%s: %d round trips while denying from the view", name, got-trips)
		}
		if d, err := n.AllowN(ctx, "k", until, w); err != nil || !d.Allowed {
			t.Fatalf("%s: at the end of RetryAfter (%v): %+v, %v", name, until.Sub(t0), d, err)
		}
	}
	// t0 is 500 ms into its window. 10 units now: the next passes 1 ms
	// into the next window, once the previous window's weight is below 1.
	admit(t0, max)
	check("across the roll", t0, 1, 501*time.Millisecond)
	// That unit passed 1 ms into the next window. 300 ms into it the 10
	// units of the previous one weigh 7, so 2 more fill it; 3 units then
	// pass when 3 + 10 × (1 − e/1000) < 10 − 3 + 1, at e = 501: 201 ms on.
	at := t0.Add(800 * time.Millisecond)
	admit(at, 2)
	check("within a window, 3 units", at, 3, 201*time.Millisecond)
}
