package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// TestNeverPassingRequestHasNoRetryAfter: a request denied by a
// descriptor whose hits_addend exceeds its limit never passes, so the
// response carries no Retry-After (a client honouring it would retry
// forever), alone or beside a descriptor that only waits, while its
// status keeps OVER_LIMIT and duration_until_reset (the window, as
// envoyproxy/ratelimit reports a window's reset for any denial); a
// request that only waits keeps its Retry-After, and so does one denied
// by quota_mode descriptors of which one may pass later. It catches the
// wait of a never-passing descriptor put in Retry-After, and a
// never-passing quota_mode descriptor taken for the whole request.
func TestNeverPassingRequestHasNoRetryAfter(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk, Headers: true})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, perIPAndGlobal(10)))
	ctx := context.Background()
	ask := func(req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
		t.Helper()
		resp, err := s.ShouldRateLimit(ctx, req)
		require.NoError(t, err)
		return resp
	}

	resp := ask(globalOnly(11))
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "11 hits never fit in 10")
	assert.Equal(t, time.Minute, resp.Statuses[0].DurationUntilReset.AsDuration())
	assert.Empty(t, headerValue(resp, "Retry-After"), "11 hits on a limit of 10")
	assert.Equal(t, `"descriptors[1]";r=0;t=60`, headerValue(resp, "RateLimit"))

	require.Equal(t, rlsv3.RateLimitResponse_OK, ask(ipThenGlobal("10.0.0.1")).OverallCode)
	req := ipThenGlobal("10.0.0.1") // over its 1 a minute: it waits
	resp = ask(req)
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode)
	assert.Equal(t, "61", headerValue(resp, "Retry-After"), "a request that waits (60.001 s: the sliding window)")
	req.Descriptors[1].HitsAddend = wrapperspb.UInt64(11)
	resp = ask(req)
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[1].Code)
	assert.Empty(t, headerValue(resp, "Retry-After"), "one descriptor waits, the other never passes")

	s.SetConfig(loadRules(t, quotaRules))
	require.Equal(t, rlsv3.RateLimitResponse_OK, ask(quotaRequest("bucket_a", "x")).OverallCode)
	q := quotaRequest("bucket_a", "x", "bucket_b", "y") // a spent, b's 2 hits never fit
	q.Descriptors[1].HitsAddend = wrapperspb.UInt64(2)
	resp = ask(q)
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "every quota over")
	assert.Equal(t, "61", headerValue(resp, "Retry-After"), "bucket_a passes again in 60.001 s")
	q.Descriptors[0].HitsAddend = wrapperspb.UInt64(2)
	resp = ask(q)
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode)
	assert.Empty(t, headerValue(resp, "Retry-After"), "no quota ever fits 2 hits")
}
