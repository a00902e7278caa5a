package server_test

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/server"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/sync/budget"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdleLimiterReleasedWithoutRequests: on the budget backend, a limit
// override's limiter (a Sync loop against Redis) left unused past
// -limiter-idle is released by the server's own sweep while no request
// comes at all, and the configuration's limiter is not. The test drives
// the backend's clock and waits for the release itself (OnRelease). It
// catches a pool that looks for idle limiters only at a request, whose
// idle budget limiters keep syncing with Redis until traffic resumes.
func TestIdleLimiterReleasedWithoutRequests(t *testing.T) {
	rs := startRedis(t)
	clk := core.NewManualClock(t0)
	released := make(chan string, 4)
	b := service.NewBudget(service.BudgetOptions{PoP: "a", Redis: redisClient(t, rs.Addr), PoPs: 1, Clock: clk, Sync: time.Hour,
		Pool:      service.PoolOptions{Idle: time.Minute},
		OnRelease: func(name string, _ *budget.Limiter) { released <- name }})
	o := server.Options{Service: service.Options{Backend: b, Clock: clk}, SweepInterval: time.Millisecond}
	r := start(t, slidingRules, o)
	d := desc("remote_address", "10.0.0.1")
	d.Limit = &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 50, Unit: typev3.RateLimitUnit_MINUTE}
	r.ask(t, "edge", 0, d)
	r.ask(t, "edge", 0, desc("remote_address", "10.0.0.2"))
	require.Equal(t, service.PoolStats{Live: 2, Kept: 1}, b.Pool())

	clk.Advance(time.Minute) // no request from here on
	assert.Equal(t, "el-50-60000", <-released, "the override's limiter, released by the sweep")
	assert.Equal(t, service.PoolStats{Live: 1, Kept: 1, Released: 1}, b.Pool(), "the configuration's limiter stays")
}
