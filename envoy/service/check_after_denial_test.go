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

// TestCheckOnlyAfterDenialOverLimit: once a counted request was denied,
// a descriptor's hits_addend 0 check is OVER_LIMIT, as
// envoyproxy/ratelimit's is (its count takes the denied hit and passes
// the limit). This service counts no denied hit, so its count stays at
// the limit: it catches the check made OK while the count does not pass
// the limit (envoyproxy/ratelimit's comparison without its counting of
// denied hits), which would pass every check while every counted
// request is denied.
func TestCheckOnlyAfterDenialOverLimit(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3, algorithm: fixed}\n"))
	ctx := context.Background()
	for i := 0; i < 5; i++ { // 3 admitted, 2 denied
		resp, err := s.ShouldRateLimit(ctx, plain("10.0.0.1"))
		require.NoError(t, err)
		require.Equal(t, i < 3, resp.OverallCode == rlsv3.RateLimitResponse_OK, "request %d", i+1)
	}
	req := plain("10.0.0.1")
	req.Descriptors[0].HitsAddend = wrapperspb.UInt64(0)
	resp, err := s.ShouldRateLimit(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "a hit was denied: the check is over the limit")
	assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining)
}
