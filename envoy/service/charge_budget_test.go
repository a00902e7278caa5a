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

// TestChargeOnBudgetBackend: on the budget backend, whose denials report
// as left units its instances' free credit keeps back (a count of them is
// denied), a charge that does not fit still spends the quota but for at
// most 2 units an instance, whether the hits exceed the limit (1500 of
// 1000) or only what is left (500 of 300). It catches a charge that gives
// up when a count of the reported quota left is denied (1000 and 300
// left uncounted), or that halves what it tries then (125 and 75 left).
func TestChargeOnBudgetBackend(t *testing.T) {
	const pops = 2
	clk := core.NewManualClock(poolT0)
	b := NewBudget(BudgetOptions{PoP: "a", Redis: harnessClient(t, 5*time.Second), PoPs: pops, Clock: clk, Sync: time.Hour})
	t.Cleanup(func() { b.Close(context.Background()) })
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, chargeRules))
	ask := func(req *rlsv3.RateLimitRequest) *rlsv3.RateLimitResponse {
		t.Helper()
		resp, err := s.ShouldRateLimit(context.Background(), req)
		require.NoError(t, err)
		return resp
	}
	st := ask(tokensRequest("tokens", "u", 1500)).Statuses[0]
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, st.Code)
	assert.LessOrEqual(t, st.LimitRemaining, uint32(2*pops), "1500 of 1000: the quota spent")

	require.Equal(t, rlsv3.RateLimitResponse_OK, ask(tokensRequest("tokens", "v", 700)).OverallCode)
	st = ask(tokensRequest("tokens", "v", 500)).Statuses[0]
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, st.Code)
	assert.LessOrEqual(t, st.LimitRemaining, uint32(2*pops), "500 of the 300 left: the quota spent")
}
