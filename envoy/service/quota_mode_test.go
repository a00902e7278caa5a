package service

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	commonv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quotaRules has two quota_mode rules of 1 a minute and one plain rule.
const quotaRules = `
domain: q
descriptors:
  - key: bucket_a
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: bucket_b
    quota_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
  - key: path
    rate_limit: {unit: minute, requests_per_unit: 10}
`

// quotaRequest is a request of domain q with one descriptor per key/value
// pair.
func quotaRequest(kv ...string) *rlsv3.RateLimitRequest {
	req := &rlsv3.RateLimitRequest{Domain: "q"}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Descriptors = append(req.Descriptors, &commonv3.RateLimitDescriptor{
			Entries: []*commonv3.RateLimitDescriptor_Entry{{Key: kv[i], Value: kv[i+1]}}})
	}
	return req
}

// quotaService is a Service of quotaRules on a local backend whose clock
// stands still.
func quotaService(t *testing.T) *Service {
	t.Helper()
	clk := core.NewManualClock(poolT0)
	b := NewLocal(clk, 0)
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, quotaRules))
	return s
}

// TestQuotaModeDeniesWhenEveryQuotaIsSpent: as envoyproxy/ratelimit
// decides quota_mode, a request is OVER_LIMIT when every quota_mode
// descriptor it carries is over its limit, and passes while one of them
// has quota left (the one over its limit keeps its OVER_LIMIT status and is
// listed in quotaModeViolations); a plain descriptor within its limit does
// not make a spent quota pass. It catches quota_mode answered OK
// whatever its quota, which never enforced a quota at all.
func TestQuotaModeDeniesWhenEveryQuotaIsSpent(t *testing.T) {
	s := quotaService(t)
	ctx := context.Background()
	ask := func(kv ...string) *rlsv3.RateLimitResponse {
		resp, err := s.ShouldRateLimit(ctx, quotaRequest(kv...))
		require.NoError(t, err)
		return resp
	}

	require.Equal(t, rlsv3.RateLimitResponse_OK, ask("bucket_a", "t1").OverallCode, "a's one unit")
	resp := ask("bucket_a", "t1", "bucket_b", "t1")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "b has quota left")
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.Statuses[0].Code, "a's status says it is spent")
	v := resp.GetDynamicMetadata().GetFields()["quotaModeViolations"].GetListValue().GetValues()
	require.Len(t, v, 1)
	assert.Equal(t, float64(0), v[0].GetNumberValue())

	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask("bucket_a", "t1", "bucket_b", "t1").OverallCode, "both quotas spent")
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask("bucket_a", "t1").OverallCode, "its only quota spent")
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask("path", "/x", "bucket_a", "t1").OverallCode,
		"a plain descriptor within its limit does not make a spent quota pass")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask("bucket_a", "t2").OverallCode, "another tenant's quota")
}

// TestSpentQuotasCountNothingAfter: once every quota_mode descriptor of a
// request is spent, the request is denied, and the descriptors after the
// last quota are checked, not counted, as after any denial: five requests
// denied by their spent quota leave the plain limit after it untouched,
// while a request whose quota has room counts it. It catches the quotas'
// denial found only after every descriptor was counted.
func TestSpentQuotasCountNothingAfter(t *testing.T) {
	s := quotaService(t)
	ctx := context.Background()
	resp, err := s.ShouldRateLimit(ctx, quotaRequest("bucket_a", "t1"))
	require.NoError(t, err)
	require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "the quota's one unit")
	for i := range 5 {
		resp, err = s.ShouldRateLimit(ctx, quotaRequest("bucket_a", "t1", "path", "/x"))
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, resp.OverallCode, "request %d: its only quota is spent", i)
	}
	resp, err = s.ShouldRateLimit(ctx, quotaRequest("path", "/x"))
	require.NoError(t, err)
	assert.Equal(t, uint32(9), resp.Statuses[0].LimitRemaining, "five denied requests spent nothing of path's 10")
	resp, err = s.ShouldRateLimit(ctx, quotaRequest("bucket_a", "t2", "path", "/x"))
	require.NoError(t, err)
	require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode, "a quota with room")
	assert.Equal(t, uint32(8), resp.Statuses[1].LimitRemaining, "a request its quota admits counts the plain limit")
}
