package budget

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hammer runs workers × each AllowN(key, 1) at once on lims (round robin)
// and returns how many were admitted.
func hammer(t *testing.T, lims []*Limiter, workers, each int) int64 {
	t.Helper()
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				d, _ := lims[w%len(lims)].Allow(context.Background(), "k")
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return admitted.Load()
}

// TestLimiterConcurrentPoPs: four PoPs' Limiters hammered at once in one
// window (a manual clock) admit no more than the limit together, and no
// fewer than it while Redis has headroom for them.
func TestLimiterConcurrentPoPs(t *testing.T) {
	rdb, _ := redistest.Client(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	var lims []*Limiter
	for p := range 4 {
		l, err := New(Config{PoP: string(rune('a' + p)), Limit: core.PerWindow(40, testWindow*time.Millisecond), PoPs: 4}, rdb, clock)
		require.NoError(t, err)
		lims = append(lims, l)
	}
	var got int64
	for range 10 { // rounds of concurrent requests, each followed by every PoP's Sync
		got += hammer(t, lims, 16, 4)
		for _, l := range lims {
			require.NoError(t, l.Sync(context.Background()), "a Sync on a healthy Redis")
		}
	}
	assert.LessOrEqual(t, got, int64(40), "640 requests over 4 PoPs in one window admit at most the limit of 40")
	// Once every PoP reported its free unit and gave up the next window's
	// slot, only E2's R_{w+2} (4 slots) stays reserved.
	assert.GreaterOrEqual(t, got, int64(40-4), "Syncs hand the headroom to the PoPs with demand")
	for _, l := range lims {
		assert.NoError(t, l.Close(context.Background()), "the final Sync succeeds")
		_, err := l.Allow(context.Background(), "k")
		assert.ErrorIs(t, err, ErrClosed, "a closed Limiter refuses requests")
	}
}

// TestLimiterOutageCountsUnderLock: with Redis down, concurrent requests
// at one PoP admit exactly the limit in a window: each fallback admission
// is counted in the view under the lock, so callers see each other.
func TestLimiterOutageCountsUnderLock(t *testing.T) {
	rdb, srv := redistest.Client(t)
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	fc, err := New(Config{PoP: "y", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FailClosed: true}, rdb, clock)
	require.NoError(t, err)
	for _, lim := range []*Limiter{l, fc} {
		require.NoError(t, lim.Sync(context.Background()), "the free-credit lease is taken before the outage")
	}
	srv.Stop()
	got := hammer(t, []*Limiter{l}, 8, 10)
	assert.Equal(t, int64(10), got, "80 requests during an outage admit the limit of 10, free credit included")
	assert.Equal(t, int64(1), hammer(t, []*Limiter{fc}, 8, 10), "FailClosed: only the free unit during an outage")
}

// TestLimiterGroupsByClient: with Groups 0, New (and ForClient, which it
// uses) spreads a Redis Cluster client's buckets over 16 hash tags (groups
// go to different masters), no more than its Buckets (a group holds at
// least a bucket), and keeps one group on a single Redis (one Sync call per
// round trip). No call is made: the clients are never used.
func TestLimiterGroupsByClient(t *testing.T) {
	cfg := Config{PoP: "p", Limit: core.PerWindow(10, time.Second), PoPs: 2}
	for name, tc := range map[string]struct {
		rdb    redis.UniversalClient
		groups int
	}{
		"single":  {redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), 1},
		"cluster": {redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), 16},
	} {
		l, err := New(cfg, tc.rdb, nil)
		require.NoError(t, err, name)
		assert.Equal(t, tc.groups, l.m.Config().Groups, "%s client", name)
		// ForClient, which a driver of its own builds Machines from,
		// completes the Config as New does
		fc, err := ForClient(cfg, tc.rdb)
		require.NoError(t, err, name)
		m, err := NewMachine(fc)
		require.NoError(t, err, name)
		assert.Equal(t, tc.groups, m.Config().Groups, "%s client: a Machine of ForClient's Config", name)
		assert.Equal(t, uint64(1), fc.Incarnation&1, "%s client: ForClient draws an odd, so nonzero, incarnation", name)
		kept := cfg
		kept.Incarnation = 6
		fc, err = ForClient(kept, tc.rdb)
		require.NoError(t, err, name)
		assert.Equal(t, uint64(6), fc.Incarnation, "%s client: an incarnation given is kept", name)
		require.NoError(t, tc.rdb.Close())
	}
	cfg.Groups = 4
	l, err := New(cfg, redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), nil)
	require.NoError(t, err)
	assert.Equal(t, 4, l.m.Config().Groups, "a Groups set by the user is kept")
	cfg.Groups, cfg.Buckets = 0, 8
	l, err = New(cfg, redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}}), nil)
	require.NoError(t, err, "8 buckets on a cluster client")
	assert.Equal(t, 8, l.m.Config().Groups, "no more groups than buckets: each group holds a bucket")
}

// TestInjectedClockDecidesUnaged: a Limiter given a clock runs its Calls at
// the request's own time (Limiter.at), so a decision there is already at
// the request's instant and carries no age, which would move it before
// the request. With this PoP's one-way delay taken as 2 s, a request that
// the estimate at its own instant admits, and the estimate 2 s earlier
// denies, is admitted; the same request on Redis' clock (no clock given,
// pop-sim's model of Redis running the Call later) is aged. It catches
// the age sent with an injected clock's Calls, and the age not sent on
// Redis' clock.
func TestInjectedClockDecidesUnaged(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const max = 100
	at := int64(w0 + testWindow/2)
	l, err := New(Config{PoP: "a", Limit: core.PerWindow(max, testWindow*time.Millisecond), PoPs: 1, FreeCredit: -1}, rdb, core.NewManualClock(time.UnixMilli(at)))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(ctx) })
	// previous window 100, this one 45: at half the window the estimate
	// is 95 (one unit fits), 2 s earlier 115 (none does)
	writeState(t, rdb, l.m, "k", 999, cgk{C: 100, K: 1})
	writeState(t, rdb, l.m, "k", 1000, cgk{C: 45, K: 1})
	l.m.oneWay, l.m.oneWayKnown = 2000, true
	d, err := l.Allow(ctx, "k")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "decided at the request's own instant: %+v", d)

	// the same on Redis' clock, run at the same instant: aged 2 s, denied
	m := l.m
	m.oneWay, m.oneWayKnown = 2000, true
	_, c := m.Request(at, "k", 1)
	require.NotNil(t, c, "Redis is asked")
	assert.EqualValues(t, 2000, c.age, "a Call planned by the Machine carries the age")
	r, err := Exec(ctx, rdb, m, c, at)
	require.NoError(t, err)
	assert.EqualValues(t, 0, r.Items[0].Allowed, "aged 2 s, the estimate (116 with the unit admitted above) leaves no unit")
}
