package service

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestDescriptorHitsAddendZeroChecksOnly: a descriptor whose hits_addend
// is set to 0 is checked without counting, as envoyproxy/ratelimit does
// (Envoy sends it to ask whether quota is left, and the cost later): OK
// with the quota left while a unit remains, OVER_LIMIT once none does,
// and any number of such checks spend nothing. The request's hits_addend
// 0 is unset and still means 1. It catches the descriptor's 0 counted as
// 1 (five checks spent a limit of 3).
func TestDescriptorHitsAddendZeroChecksOnly(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"))
	ctx := context.Background()
	check := func() *rlsv3.RateLimitResponse {
		req := plain("10.0.0.1")
		req.Descriptors[0].HitsAddend = wrapperspb.UInt64(0)
		resp, err := s.ShouldRateLimit(ctx, req)
		require.NoError(t, err)
		return resp
	}
	for i := 0; i < 5; i++ {
		resp := check()
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "check %d", i+1)
		assert.Equal(t, uint32(3), resp.Statuses[0].LimitRemaining, "check %d spends nothing", i+1)
	}
	for i := 0; i < 3; i++ {
		resp, err := s.ShouldRateLimit(ctx, plain("10.0.0.1")) // request hits_addend 0: 1
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "request %d of 3", i+1)
		assert.Equal(t, uint32(2-i), resp.Statuses[0].LimitRemaining, "request %d counted 1", i+1)
	}
	resp := check()
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "no unit left")
	assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining)
}
