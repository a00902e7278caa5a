package service

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shadowAndReplacing has a shadow_mode rule, and a rule that replaces
// per-ip.
const shadowAndReplacing = `
domain: edge
descriptors:
  - key: remote_address
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 10, name: per-ip}
  - key: tenant
    rate_limit: {unit: minute, requests_per_unit: 100, replaces: [{name: per-ip}]}
`

// TestOverrideIgnoresRuleModes: a descriptor's limit override is enforced
// as envoyproxy/ratelimit enforces it, without its rule's shadow_mode, and
// the overridden rule's replaces do not drop another descriptor's limit.
// It catches an override under a shadow_mode rule never enforced, and an
// overridden descriptor still replacing per-ip.
func TestOverrideIgnoresRuleModes(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, shadowAndReplacing))
	ctx := context.Background()

	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT} {
		resp, err := s.ShouldRateLimit(ctx, overridden("10.0.0.1", 1, typev3.RateLimitUnit_MINUTE))
		require.NoError(t, err)
		assert.Equal(t, want, resp.OverallCode, "request %d under an override of 1 a minute", i+1)
	}

	tenant := &commonv3.RateLimitDescriptor{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: "tenant", Value: "t"}},
		Limit: &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 100, Unit: typev3.RateLimitUnit_MINUTE}}
	req := plain("10.0.0.2")
	req.Descriptors = append(req.Descriptors, tenant)
	resp, err := s.ShouldRateLimit(ctx, req)
	require.NoError(t, err)
	assert.NotNil(t, resp.Statuses[0].CurrentLimit, "per-ip is not replaced by an overridden descriptor")
}
