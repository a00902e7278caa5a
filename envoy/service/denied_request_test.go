package service

import (
	"context"
	"fmt"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// perIPAndGlobal limits each client to 1 a minute and everyone together
// to global a minute.
func perIPAndGlobal(global int) string {
	return fmt.Sprintf(`
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: generic_key
    value: global
    rate_limit: {unit: minute, requests_per_unit: %d}
`, global)
}

// ipThenGlobal is a request of client ip with the per-client descriptor
// first and the global one second.
func ipThenGlobal(ip string) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{
		{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: ip}}},
		{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "generic_key", Value: "global"}}}}}
}

// TestDeniedRequestSpendsNoLaterDescriptor: once a descriptor denies the
// request, the descriptors after it are checked without counting, so a
// client over its own limit cannot spend a limit it shares with others
// by sending more; their statuses still tell their quota (hits that do
// not fit in what is left are OVER_LIMIT). Under
// Options.ShadowMode, which answers OK, they count as before. It catches
// the later descriptors counted for a request that is denied (nine
// denied requests of one client spent the global limit of 5 and denied
// every other client).
func TestDeniedRequestSpendsNoLaterDescriptor(t *testing.T) {
	for _, shadow := range []bool{false, true} {
		clk := core.NewManualClock(poolT0)
		b := NewLocal(clk, 0)
		t.Cleanup(func() { b.Close(context.Background()) })
		s, err := New(Options{Backend: b, Clock: clk, ShadowMode: shadow})
		require.NoError(t, err)
		s.SetConfig(loadRules(t, perIPAndGlobal(5)))
		ctx := context.Background()
		for i := 0; i < 10; i++ { // one client: 1 admitted, 9 over its own limit
			resp, err := s.ShouldRateLimit(ctx, ipThenGlobal("6.6.6.6"))
			require.NoError(t, err)
			if i > 0 && !shadow {
				require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[0].Code)
				assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.Statuses[1].Code, "the global limit has room")
				assert.Equal(t, uint32(4), resp.Statuses[1].LimitRemaining, "request %d: 1 of the global 5 spent", i+1)
			}
		}
		if !shadow {
			req := ipThenGlobal("6.6.6.6")
			req.Descriptors[1].HitsAddend = wrapperspb.UInt64(5)
			resp, err := s.ShouldRateLimit(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[1].Code, "5 more do not fit in the global 4 left")
			assert.Equal(t, uint32(4), resp.Statuses[1].LimitRemaining)
		}
		resp, err := s.ShouldRateLimit(ctx, ipThenGlobal("10.0.0.1"))
		require.NoError(t, err)
		if shadow {
			assert.Equal(t, uint32(0), resp.Statuses[1].LimitRemaining, "shadow mode: every request passed and counted")
			continue
		}
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "another client passes")
		assert.Equal(t, uint32(3), resp.Statuses[1].LimitRemaining, "2 of the global 5 spent")
	}
}
