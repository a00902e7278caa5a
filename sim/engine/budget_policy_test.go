package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgetPolicies runs the budget limiter's two policies on one
// near-limit trace on a real Redis: latency first (budget-nowait) makes
// fewer round trips (fewer requests wait for Redis), accuracy first (budget)
// admits more of the clients' quota; neither lets an identity pass the
// limit further than each PoP deciding alone does (local).
func TestBudgetPolicies(t *testing.T) {
	rs := map[string]Result{}
	for _, mode := range []string{"budget", "budget-nowait", "local"} {
		e := faultEnv(t, netmodel.Faults{})
		var err error
		e.Trace, err = traffic.Generate(traffic.Config{Scenario: "near-limit", PoPs: 4, Identities: 300,
			Requests: 6000, Limit: 20, Window: time.Second, Seed: 5})
		require.NoError(t, err)
		e.Namespace += mode
		r, err := Run(context.Background(), e, mode)
		require.NoError(t, err, mode)
		rs[mode] = r
	}
	acc, lat, loc := rs["budget"], rs["budget-nowait"], rs["local"]
	assert.Less(t, lat.RedisRoundTrips, acc.RedisRoundTrips, "latency first asks Redis less often")
	assert.Greater(t, acc.Allowed, lat.Allowed, "accuracy first admits more of the near-limit clients' quota")
	for name, r := range map[string]Result{"budget": acc, "budget-nowait": lat} {
		assert.LessOrEqual(t, r.MaxOveradmission, loc.MaxOveradmission, "%s: worst over-admission within each PoP deciding alone", name)
	}
	t.Logf("budget: allowed %d, round trips %d, p99 %.1f ms, worst %.2f; nowait: %d, %d, %.1f ms, %.2f; local worst %.2f",
		acc.Allowed, acc.RedisRoundTrips, acc.AddedLatencyP99Ms, acc.MaxOveradmission,
		lat.Allowed, lat.RedisRoundTrips, lat.AddedLatencyP99Ms, lat.MaxOveradmission, loc.MaxOveradmission)
}
