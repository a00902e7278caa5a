package server_test

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestLimitOverrideWindowPastMaxWindow: a descriptor's limit override of
// 585 years (unit_multiplier 585, unit YEAR), past core.MaxWindow, is
// refused with InvalidArgument, with requests_per_unit 1 and 0 (whose
// window is its denials' wait). It catches the window wrapping around
// int64 nanoseconds to about 21 days, which was then enforced as the
// override, and a window left unchecked under requests_per_unit 0.
func TestLimitOverrideWindowPastMaxWindow(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	for _, rpu := range []uint32{1, 0} {
		d := desc("anything", "x")
		d.Limit = &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: rpu, Unit: typev3.RateLimitUnit_YEAR,
			UnitMultiplier: wrapperspb.UInt32(585)}
		resp, err := r.client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{d}})
		require.Error(t, err, "requests_per_unit %d: an override past core.MaxWindow must be refused, got %v", rpu, resp)
		assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		assert.Contains(t, status.Convert(err).Message(), "limit override cannot be enforced")
	}
}
