package service

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// chargeRules limits a user's tokens and an org's tokens with charge
// rules, and the same user's tokens with a plain rule.
const chargeRules = `
domain: ai
descriptors:
  - key: tokens
    charge: true
    rate_limit: {unit: minute, requests_per_unit: 1000}
  - key: org_tokens
    charge: true
    rate_limit: {unit: minute, requests_per_unit: 5000}
  - key: plain_tokens
    rate_limit: {unit: minute, requests_per_unit: 1000}
`

// tokensRequest is a request of domain ai with one descriptor per
// key/value/hits triple (hits -1: no descriptor hits_addend).
func tokensRequest(kvh ...any) *rlsv3.RateLimitRequest {
	req := &rlsv3.RateLimitRequest{Domain: "ai"}
	for i := 0; i+2 < len(kvh); i += 3 {
		d := &commonv3.RateLimitDescriptor{Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: kvh[i].(string), Value: kvh[i+1].(string)}}}
		if h := kvh[i+2].(int); h >= 0 {
			d.HitsAddend = wrapperspb.UInt64(uint64(h))
		}
		req.Descriptors = append(req.Descriptors, d)
	}
	return req
}

// TestChargeCountsWhatFits: on the local and redis backends, a charge
// rule's hits that do not fit (the tokens of a response already served,
// sent after it as Envoy's apply_on_stream_done does) count what is left
// of the quota, so the next request-time check (hits_addend 0) is
// OVER_LIMIT, whether the hits exceed the limit (1500 of 1000) or only
// what is left (500 of 300); the denial reports 0 left and, for hits
// within the limit, the wait core's sliding window gives those hits; a
// charge descriptor after the denied one is counted all the same; a plain
// rule still counts nothing of hits that do not fit. It catches the
// charge counting nothing (the cost of a served response never spent, a
// client consuming without bound), a charge after a denial checked but
// not counted, and the plain rule's behaviour changed.
func TestChargeCountsWhatFits(t *testing.T) {
	for _, name := range []string{"local", "redis"} {
		t.Run(name, func(t *testing.T) {
			clk := core.NewManualClock(poolT0)
			var b Backend = NewLocal(clk, 0)
			if name == "redis" {
				b = NewRedis(harnessClient(t, 5*time.Second), RedisOptions{Clock: clk, Timeout: 5 * time.Second})
			}
			t.Cleanup(func() { b.Close(context.Background()) })
			s, err := New(Options{Backend: b, Clock: clk, Headers: true})
			require.NoError(t, err)
			s.SetConfig(loadRules(t, chargeRules))
			ask := func(req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
				t.Helper()
				resp, err := s.ShouldRateLimit(context.Background(), req)
				require.NoError(t, err)
				return resp
			}

			require.Equal(t, rlsv3.RateLimitResponse_OK, ask(tokensRequest("tokens", "u", 0)).OverallCode, "u has its 1000")
			resp := ask(tokensRequest("tokens", "u", 1500, "org_tokens", "o", 1500))
			require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[0].Code, "1500 tokens of u's 1000")
			assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining, "the 1000 left counted")
			assert.Empty(t, headerValue(resp, "Retry-After"), "1500 never fit")
			require.Equal(t, rlsv3.RateLimitResponse_OK, resp.Statuses[1].Code)
			assert.Equal(t, uint32(3500), resp.Statuses[1].LimitRemaining, "the org's charge counted after u's denial")
			resp = ask(tokensRequest("tokens", "u", 0))
			assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "u's next request waits")

			require.Equal(t, uint32(300), ask(tokensRequest("tokens", "v", 700)).Statuses[0].LimitRemaining)
			resp = ask(tokensRequest("tokens", "v", 500))
			require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[0].Code, "500 of the 300 left")
			assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining, "the 300 left counted")
			lim := core.Limit{Max: 1000, Window: time.Minute}
			var ref core.WindowState
			ref.DecideSliding(lim, core.Millis(poolT0), 1000, true)
			want := ref.DecideSliding(lim, core.Millis(poolT0), 500, false).RetryAfter
			assert.Equal(t, want, resp.Statuses[0].DurationUntilReset.AsDuration(), "the wait of 500 on a spent quota")
			assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(tokensRequest("tokens", "v", 0)).OverallCode, "v's next request waits")

			resp = ask(tokensRequest("plain_tokens", "u", 1500))
			require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode)
			resp = ask(tokensRequest("plain_tokens", "u", 0))
			require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "a plain rule counts nothing of hits that do not fit")
			assert.Equal(t, uint32(1000), resp.Statuses[0].LimitRemaining)
		})
	}
}

// TestChargeUnderLimitOverride: a descriptor of a charge rule that carries
// its own limit override (100 a minute) is still charged: 150 hits count
// the 100 left, and the next check is OVER_LIMIT. It catches the rule's
// charge dropped with its limit, as shadow_mode and quota_mode are.
func TestChargeUnderLimitOverride(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, chargeRules))
	over := func(hits int) *rlsv3.RateLimitRequest {
		req := tokensRequest("tokens", "w", hits)
		req.Descriptors[0].Limit = &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 100, Unit: typev3.RateLimitUnit_MINUTE}
		return req
	}
	resp, err := s.ShouldRateLimit(context.Background(), over(150))
	require.NoError(t, err)
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode)
	resp, err = s.ShouldRateLimit(context.Background(), over(0))
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "the override's 100 spent by the charge")
}
