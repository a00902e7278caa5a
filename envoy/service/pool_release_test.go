package service

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/budget"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOverrideLimitersReleased: on the budget backend, 40 requests each
// with a distinct limit override build 40 limiters, each running a Sync
// loop against Redis. Once unused for DefaultIdle by the service's clock,
// the next request releases every one of them (closed: its Sync loop
// stopped, AllowN refused), the configuration's limiter stays, and a
// request of an override again gets a fresh limiter and a decision. It
// catches a pool that keeps every limiter until Close (the override
// limiters' Sync loops then run for ever) and one that releases the
// configuration's limiter, or does not tell OnRelease (whose caller
// would export a released limiter's stats for ever).
func TestOverrideLimitersReleased(t *testing.T) {
	rdb := harnessClient(t, 2*time.Second)
	clk := core.NewManualClock(poolT0)
	var mu sync.Mutex
	built := map[string][]*budget.Limiter{}
	released := map[string]int{}
	b := NewBudget(BudgetOptions{PoP: "a", Redis: rdb, PoPs: 1, Clock: clk, Sync: time.Hour,
		OnLimiter: func(name string, l *budget.Limiter) {
			mu.Lock()
			defer mu.Unlock()
			built[name] = append(built[name], l)
		},
		OnRelease: func(name string, l *budget.Limiter) {
			mu.Lock()
			defer mu.Unlock()
			released[name]++
			assert.Same(t, built[name][len(built[name])-1], l, "OnRelease names the limiter released")
		}})
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, edgeRules))
	ctx := context.Background()

	const n = 40
	for i := range n {
		resp, err := s.ShouldRateLimit(ctx, overridden("10.0.0.1", uint32(100+i), typev3.RateLimitUnit_MINUTE))
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	}
	resp, err := s.ShouldRateLimit(ctx, plain("10.0.0.1"))
	require.NoError(t, err)
	require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	mu.Lock()
	require.Len(t, built, n+1, "one limiter per override and the rule's")
	mu.Unlock()

	clk.Advance(DefaultIdle)
	resp, err = s.ShouldRateLimit(ctx, plain("10.0.0.2")) // a request looks for idle limiters
	require.NoError(t, err)
	require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	settle(&b.p)

	rule := budgetName("el", core.PerWindow(10, time.Minute))
	mu.Lock()
	open := 0
	for name, ls := range built {
		require.Len(t, ls, 1, "%s built once", name)
		_, err := ls[0].AllowN(ctx, "probe", clk.Now(), 1)
		if name == rule {
			assert.NoError(t, err, "the configuration's limiter stays")
			continue
		}
		if err == nil {
			open++
		} else {
			assert.ErrorIs(t, err, budget.ErrClosed, name)
		}
	}
	mu.Unlock()
	assert.Zero(t, open, "override limiters still running their Sync loop after %v unused, of %d", DefaultIdle, n)
	mu.Lock()
	assert.Len(t, released, n, "OnRelease told of every override limiter")
	assert.Zero(t, released[rule], "nor of the configuration's")
	mu.Unlock()
	assert.Equal(t, PoolStats{Live: 1, Kept: 1, Released: n}, b.Pool())

	resp, err = s.ShouldRateLimit(ctx, overridden("10.0.0.1", 100, typev3.RateLimitUnit_MINUTE))
	require.NoError(t, err, "a released override gets a fresh limiter")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	mu.Lock()
	assert.Len(t, built[budgetName("el", core.PerWindow(100, time.Minute))], 2, "built again after its release")
	mu.Unlock()
}
