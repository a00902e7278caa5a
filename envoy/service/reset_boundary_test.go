package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneAMinute is edge's remote_address limited to 1 a minute (sliding).
const oneAMinute = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 1, name: per-ip}
`

// TestSlidingResetAdmitsAtTheReset: a client that spent its last unit of
// a sliding window and retries at duration_until_reset is admitted, and
// not a millisecond earlier: the window's count starts to fade 1 ms into
// the next window, not at its start, where it still weighs in full. One
// second before the boundary the wait is 1.001 s, so the RateLimit
// field's t is 2, as the library's middleware says. It catches a reset
// at the window's end (1 s, t=1: the client retries at the boundary and
// is denied) and one past the earliest admission.
func TestSlidingResetAdmitsAtTheReset(t *testing.T) {
	clk := core.NewManualClock(poolT0.Add(59 * time.Second))
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk, Headers: true})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, oneAMinute))
	ctx := context.Background()

	resp, err := s.ShouldRateLimit(ctx, plain("10.0.0.1"))
	require.NoError(t, err)
	require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
	reset := resp.Statuses[0].DurationUntilReset.AsDuration()
	assert.Equal(t, time.Second+time.Millisecond, reset, "1 s before the boundary: 1 ms into the next window")
	assert.Equal(t, `"per-ip";r=0;t=2`, headerValue(resp, "RateLimit"))

	clk.Advance(reset - time.Millisecond) // the window's start: its predecessor weighs in full
	resp, err = s.ShouldRateLimit(ctx, plain("10.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "a millisecond before the reset")
	clk.Advance(time.Millisecond)
	resp, err = s.ShouldRateLimit(ctx, plain("10.0.0.1"))
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "at the reset")
}

// TestResetNeverPastTheWindow: at the very start of a sliding window the
// wait to 1 ms into the next would be w + 1 ms, which rounds t up past
// the policy's w; like the middleware's, the reset is capped at w there,
// and a fixed window's is its end (quota comes back at the boundary). It
// catches an uncapped reset (t=61 on w=60) and a fixed window given the
// sliding window's extra millisecond.
func TestResetNeverPastTheWindow(t *testing.T) {
	for _, c := range []struct {
		alg  string
		want time.Duration
	}{{"sliding", time.Minute}, {"fixed", time.Minute}} {
		clk := core.NewManualClock(poolT0)
		b := NewLocal(clk, 0)
		t.Cleanup(func() { b.Close(context.Background()) })
		s, err := New(Options{Backend: b, Clock: clk, Headers: true})
		require.NoError(t, err)
		s.SetConfig(loadRules(t, oneAMinute[:len(oneAMinute)-2]+", algorithm: "+c.alg+"}\n"))
		resp, err := s.ShouldRateLimit(context.Background(), plain("10.0.0.1"))
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, c.alg)
		assert.Equal(t, c.want, resp.Statuses[0].DurationUntilReset.AsDuration(), c.alg)
		assert.Equal(t, `"per-ip";r=0;t=60`, headerValue(resp, "RateLimit"), c.alg)

		clk.Advance(59 * time.Second)
		resp, err = s.ShouldRateLimit(context.Background(), plain("10.0.0.2"))
		require.NoError(t, err)
		want := time.Second
		if c.alg == "sliding" {
			want += time.Millisecond
		}
		assert.Equal(t, want, resp.Statuses[0].DurationUntilReset.AsDuration(), "%s, 1 s before the boundary", c.alg)
	}
}

// headerValue is the response header key's value, "" when absent.
func headerValue(resp *rlsv3.RateLimitResponse, key string) string {
	for _, h := range resp.GetResponseHeadersToAdd() {
		if h.GetKey() == key {
			return h.GetValue()
		}
	}
	return ""
}
