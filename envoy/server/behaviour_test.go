package server_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

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

const (
	ok   = rlsv3.RateLimitResponse_OK
	over = rlsv3.RateLimitResponse_OVER_LIMIT
)

// rules is written from envoyproxy/ratelimit's documented examples.
const rules = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 3, name: per-ip}
  - key: path
    value: "/api/*"
    rate_limit: {unit: second, requests_per_unit: 2}
  - key: path
    value: "/api/health"
    rate_limit: {unlimited: true}
  - key: to_cluster
    value: mongo
    descriptors:
      - key: from_cluster
        rate_limit: {unit: second, requests_per_unit: 2}
      - key: from_cluster
        value: batch
        rate_limit: {unit: second, requests_per_unit: 1}
  - key: client
    value: bot
    rate_limit: {unit: minute, requests_per_unit: 1}
    shadow_mode: true
  - key: premium_user
    rate_limit: {unit: minute, requests_per_unit: 10, name: premium}
    replaces:
      - name: per-ip
  - key: blocked
    rate_limit: {unit: second, requests_per_unit: 0}
  - key: weighted
    rate_limit: {unit: minute, requests_per_unit: 10, algorithm: fixed}
`

func TestPerDescriptorStatusesInOrder(t *testing.T) {
	clk := core.NewManualClock(t0.Add(10 * time.Second))
	r := start(t, rules, localOpts(clk))

	ip := desc("remote_address", "10.0.0.1")
	for i := range 3 {
		resp := r.ask(t, "edge", 0, ip)
		require.Equal(t, ok, resp.OverallCode, "request %d of 3 per minute passes", i+1)
		st := resp.Statuses[0]
		assert.Equal(t, uint32(2-i), st.LimitRemaining, "remaining after request %d", i+1)
		assert.Equal(t, "per-ip", st.CurrentLimit.GetName())
		assert.Equal(t, uint32(3), st.CurrentLimit.GetRequestsPerUnit())
		assert.Equal(t, rlsv3.RateLimitResponse_RateLimit_MINUTE, st.CurrentLimit.GetUnit())
		assert.Equal(t, 50*time.Second+time.Millisecond, st.DurationUntilReset.AsDuration(), "10 s into the minute, the count fades 1 ms after the window ends in 50 s")
	}
	resp := r.ask(t, "edge", 0, desc("path", "/other"), ip, desc("remote_address", "10.0.0.2"))
	assert.Equal(t, over, resp.OverallCode, "one descriptor over its limit makes the request OVER_LIMIT")
	assert.Equal(t, ok, resp.Statuses[0].Code, "no rule matches path=/other")
	assert.Nil(t, resp.Statuses[0].CurrentLimit, "an unmatched descriptor has no current limit")
	assert.Equal(t, over, resp.Statuses[1].Code, "10.0.0.1's fourth request in the minute")
	assert.Equal(t, uint32(0), resp.Statuses[1].LimitRemaining)
	assert.Positive(t, resp.Statuses[1].DurationUntilReset.AsDuration(), "an over-limit status says how long to wait")
	assert.Equal(t, ok, resp.Statuses[2].Code, "a key-only rule gives each value its own counter")
	assert.Equal(t, uint32(3), resp.Statuses[2].LimitRemaining, "after the denial, checked without counting")
}

func TestNestedDescriptorsAndWildcards(t *testing.T) {
	clk := core.NewManualClock(t0)
	r := start(t, rules, localOpts(clk))

	web := desc("to_cluster", "mongo", "from_cluster", "web")
	batch := desc("to_cluster", "mongo", "from_cluster", "batch")
	assert.Equal(t, 2, r.admitted(t, 5, "edge", web), "to_cluster=mongo, from_cluster=* allows 2 a second")
	assert.Equal(t, 1, r.admitted(t, 5, "edge", batch), "the exact value batch has its own limit of 1 a second")
	assert.Equal(t, ok, r.ask(t, "edge", 0, desc("to_cluster", "mongo")).OverallCode, "the parent alone has no rate_limit")
	assert.Equal(t, ok, r.ask(t, "edge", 0, desc("to_cluster", "redis", "from_cluster", "web")).OverallCode, "to_cluster=redis has no rule")

	assert.Equal(t, 2, r.admitted(t, 5, "edge", desc("path", "/api/users")), "the wildcard /api/* allows 2 a second")
	assert.Equal(t, 2, r.admitted(t, 5, "edge", desc("path", "/api/orders")), "each value under a wildcard has its own counter")
	clk.Advance(time.Second)
	assert.Equal(t, 0, r.admitted(t, 5, "edge", desc("path", "/api/users")), "at the next second's start the previous one still weighs in full (sliding window)")
	clk.Advance(time.Second)
	assert.Equal(t, 2, r.admitted(t, 5, "edge", desc("path", "/api/users")), "two seconds on, 2 pass again")
}

func TestUnlimited(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	for range 10 {
		resp := r.ask(t, "edge", 0, desc("path", "/api/health"))
		require.Equal(t, ok, resp.OverallCode, "an exact unlimited rule beats the /api/* wildcard")
		assert.Equal(t, uint32(math.MaxUint32), resp.Statuses[0].LimitRemaining, "unlimited reports 2^32-1 remaining")
		assert.Nil(t, resp.Statuses[0].CurrentLimit)
	}
}

func TestShadowMode(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	bot := desc("client", "bot")
	first := r.ask(t, "edge", 0, bot)
	assert.Equal(t, ok, first.OverallCode)
	assert.Equal(t, uint32(0), first.Statuses[0].LimitRemaining, "1 per minute: none left")
	for range 3 {
		resp := r.ask(t, "edge", 0, bot)
		assert.Equal(t, ok, resp.OverallCode, "a shadow_mode rule over its limit is reported OK")
		assert.Equal(t, ok, resp.Statuses[0].Code)
		assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining, "but with nothing remaining")
		assert.NotContains(t, headers(resp), "Retry-After", "a shadow-mode status never asks to retry")
	}
}

func TestGlobalShadowMode(t *testing.T) {
	o := localOpts(core.NewManualClock(t0))
	o.Service.ShadowMode = true
	r := start(t, rules, o)
	assert.Equal(t, 5, r.admitted(t, 5, "edge", desc("blocked", "x")), "global shadow mode answers OK even for requests_per_unit 0")
}

func TestReplaces(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	ip := desc("remote_address", "10.0.0.9")
	premium := desc("premium_user", "alice")
	for i := range 10 {
		resp := r.ask(t, "edge", 0, ip, premium)
		require.Equal(t, ok, resp.OverallCode, "request %d: premium (10/min) replaces per-ip (3/min)", i+1)
		assert.Nil(t, resp.Statuses[0].CurrentLimit, "the replaced per-ip limit is not applied")
		assert.Equal(t, "premium", resp.Statuses[1].CurrentLimit.GetName())
	}
	assert.Equal(t, over, r.ask(t, "edge", 0, ip, premium).OverallCode, "the 11th is over premium's limit")
	assert.Equal(t, 3, r.admitted(t, 5, "edge", ip), "without premium_user, per-ip applies, and replaced requests spent none of it")
}

func TestHitsAddend(t *testing.T) {
	clk := core.NewManualClock(t0)
	r := start(t, rules, localOpts(clk))
	w := desc("weighted", "a")
	resp := r.ask(t, "edge", 4, w)
	require.Equal(t, ok, resp.OverallCode)
	assert.Equal(t, uint32(6), resp.Statuses[0].LimitRemaining, "request hits_addend 4 of 10")

	w.HitsAddend = wrapperspb.UInt64(5)
	resp = r.ask(t, "edge", 4, w)
	require.Equal(t, ok, resp.OverallCode)
	assert.Equal(t, uint32(1), resp.Statuses[0].LimitRemaining, "the descriptor's hits_addend 5 overrides the request's 4")

	w.HitsAddend = wrapperspb.UInt64(2)
	assert.Equal(t, over, r.ask(t, "edge", 0, w).OverallCode, "2 more do not fit in the 1 left")
	w.HitsAddend = wrapperspb.UInt64(0)
	resp = r.ask(t, "edge", 0, w)
	assert.Equal(t, ok, resp.OverallCode, "the descriptor's hits_addend 0 checks, counting nothing")
	assert.Equal(t, uint32(1), resp.Statuses[0].LimitRemaining)
	w.HitsAddend = nil
	resp = r.ask(t, "edge", 0, w)
	assert.Equal(t, ok, resp.OverallCode, "the request's hits_addend 0 means 1, which fits")
	assert.Equal(t, uint32(0), resp.Statuses[0].LimitRemaining)

	big := desc("weighted", "b")
	big.HitsAddend = wrapperspb.UInt64(11)
	assert.Equal(t, over, r.ask(t, "edge", 0, big).OverallCode, "more hits than the limit never pass")
	big.HitsAddend = nil
	assert.Equal(t, 10, r.admitted(t, 12, "edge", big), "the refused 11 counted nothing")
}

func TestRequestsPerUnitZeroDeniesAll(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	assert.Equal(t, 0, r.admitted(t, 3, "edge", desc("blocked", "x")), "requests_per_unit 0 denies every request")
}

func TestUnknownDomainIsOK(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	resp := r.ask(t, "other", 0, desc("remote_address", "10.0.0.1"))
	assert.Equal(t, ok, resp.OverallCode, "a domain the configuration lacks limits nothing")
}

func TestLimitOverride(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	d := desc("anything", "x")
	d.Limit = &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 2, Unit: typev3.RateLimitUnit_HOUR}
	assert.Equal(t, 2, r.admitted(t, 4, "edge", d), "a descriptor's own limit applies without a rule")
	ip := desc("remote_address", "10.9.9.9")
	ip.Limit = &commonv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit_HOUR}
	resp := r.ask(t, "edge", 0, ip)
	assert.Equal(t, "per-ip", resp.Statuses[0].CurrentLimit.GetName(), "the override keeps the rule's name")
	assert.Equal(t, rlsv3.RateLimitResponse_RateLimit_HOUR, resp.Statuses[0].CurrentLimit.GetUnit(), "and replaces its limit")
	assert.Equal(t, over, r.ask(t, "edge", 0, ip).OverallCode)
}

func TestResponseHeaders(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0.Add(10*time.Second))))
	resp := r.ask(t, "edge", 0, desc("remote_address", "10.1.1.1"), desc("weighted", "h"))
	h := headers(resp)
	assert.Equal(t, `"per-ip";q=3;w=60, "descriptors[7]";q=10;w=60`, h["RateLimit-Policy"], "one policy item per limited descriptor")
	assert.Equal(t, `"per-ip";r=2;t=51`, h["RateLimit"], "the fewest remaining, 50.001 s to 1 ms into the next window")
	assert.NotContains(t, h, "Retry-After")
	r.ask(t, "edge", 0, desc("remote_address", "10.1.1.1"))
	r.ask(t, "edge", 0, desc("remote_address", "10.1.1.1"))
	resp = r.ask(t, "edge", 0, desc("remote_address", "10.1.1.1"))
	require.Equal(t, over, resp.OverallCode)
	h = headers(resp)
	assert.True(t, strings.HasPrefix(h["RateLimit"], `"per-ip";r=0;t=`), "denied: r=0, got %q", h["RateLimit"])
	assert.NotEmpty(t, h["Retry-After"], "a denial carries Retry-After")
}

func TestBadRequests(t *testing.T) {
	r := start(t, rules, localOpts(core.NewManualClock(t0)))
	negative := desc("remote_address", "10.0.0.1")
	negative.IsNegativeHits = true
	cases := []struct {
		name string
		req  *rlsv3.RateLimitRequest
		msg  string
	}{
		{"empty domain", &rlsv3.RateLimitRequest{Descriptors: []*commonv3.RateLimitDescriptor{desc("a", "b")}}, "domain must not be empty"},
		{"no descriptors", &rlsv3.RateLimitRequest{Domain: "edge"}, "descriptor list must not be empty"},
		{"no entries", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{{}}}, "descriptor 0 has no entries"},
		{"empty key", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{desc("", "v")}}, "empty key"},
		{"oversized value", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{desc("remote_address", strings.Repeat("x", 600))}}, "at most"},
		{"negative hits", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*commonv3.RateLimitDescriptor{negative}}, "is_negative_hits is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, err := r.client.ShouldRateLimit(context.Background(), c.req)
			require.Error(t, err, "%s must be refused", c.name)
			assert.Nil(t, resp)
			assert.Equal(t, codes.InvalidArgument, status.Code(err))
			assert.Contains(t, status.Convert(err).Message(), c.msg)
		})
	}
	assert.Equal(t, 3, r.admitted(t, 4, "edge", desc("remote_address", "10.0.0.1")), "refused requests counted nothing")
}

// TestArticleTableA plays the article's table A through the server: limit
// 100 per 60 s, 100 requests in the last 100 ms of a minute, then 100 one
// second into the next; the fixed window admits 200, the sliding window 102.
func TestArticleTableA(t *testing.T) {
	got := map[string]int{}
	for _, alg := range []string{"fixed", "sliding"} {
		clk := core.NewManualClock(t0)
		r := start(t, "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 100, algorithm: "+alg+"}\n", localOpts(clk))
		got[alg] = tableA(t, r, clk)
	}
	assert.Equal(t, 200, got["fixed"], "fixed window across the boundary")
	assert.Equal(t, 102, got["sliding"], "sliding window across the boundary")
}

func tableA(t *testing.T, r *running, clk *core.ManualClock) int {
	t.Helper()
	admitted := 0
	for _, start := range []time.Duration{59_900 * time.Millisecond, 61_000 * time.Millisecond} {
		for i := range 100 {
			clk.Set(t0.Add(start + time.Duration(i)*time.Millisecond))
			if r.ask(t, "a", 0, desc("k", "v")).OverallCode == ok {
				admitted++
			}
		}
	}
	return admitted
}

func TestShareThresholdAndQuotaMode(t *testing.T) {
	r := start(t, `domain: q
descriptors:
  - key: path
    value: "files/*"
    share_threshold: true
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: path
    value: "docs/*"
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: tenant
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
`, localOpts(core.NewManualClock(t0)))
	shared := r.admitted(t, 2, "q", desc("path", "files/a.pdf")) + r.admitted(t, 2, "q", desc("path", "files/b.csv"))
	assert.Equal(t, 3, shared, "share_threshold: files/a.pdf and files/b.csv share 3 a minute")
	own := r.admitted(t, 2, "q", desc("path", "docs/a")) + r.admitted(t, 2, "q", desc("path", "docs/b"))
	assert.Equal(t, 4, own, "without it each value has its own 3")

	first := r.ask(t, "q", 0, desc("tenant", "t1"))
	require.Equal(t, ok, first.OverallCode)
	assert.Nil(t, first.DynamicMetadata, "no violation yet")
	resp := r.ask(t, "q", 0, desc("path", "docs/c"), desc("tenant", "t1"))
	assert.Equal(t, over, resp.OverallCode, "the request's only quota is spent: OVER_LIMIT, as envoyproxy/ratelimit answers")
	assert.Equal(t, ok, resp.Statuses[0].Code)
	assert.Equal(t, over, resp.Statuses[1].Code)
	assert.Equal(t, uint32(1), resp.Statuses[1].CurrentLimit.GetRequestsPerUnit())
	require.NotNil(t, resp.DynamicMetadata, "the violation is reported")
	v := resp.DynamicMetadata.Fields["quotaModeViolations"].GetListValue().GetValues()
	require.Len(t, v, 1)
	assert.Equal(t, float64(1), v[0].GetNumberValue(), "descriptor 1 violated its quota")
}
