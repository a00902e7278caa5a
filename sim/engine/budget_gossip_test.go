package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBudgetGossip runs budget-gossip beside budget on one spread-attack
// trace on a real Redis and a real NATS, gossip copies lost and
// duplicated: messages travel, heard counts deny identities at other
// PoPs, and neither the worst over-admission nor the quota served moves
// past the targets' tolerances (0.02 of the limit; 1% of the units
// admitted), since gossip only denies from lower bounds.
func TestBudgetGossip(t *testing.T) {
	ns, err := natsembed.Start()
	require.NoError(t, err, "an embedded NATS")
	t.Cleanup(ns.Stop)
	rs := map[string]Result{}
	for _, mode := range []string{"budget", "budget-gossip"} {
		e := faultEnv(t, netmodel.Faults{GossipLoss: 0.2, GossipDup: 0.2})
		e.NATSURL = ns.URL()
		e.Trace, err = traffic.Generate(traffic.Config{Scenario: "spread-attack", PoPs: 4, Identities: 300,
			Requests: 6000, Limit: 20, Window: time.Second, Seed: 3})
		require.NoError(t, err)
		e.Namespace += mode
		r, err := Run(context.Background(), e, mode)
		require.NoError(t, err, mode)
		rs[mode] = r
	}
	plain, g := rs["budget"], rs["budget-gossip"]
	assert.Zero(t, plain.NATSMessages, "budget sends no gossip")
	assert.Positive(t, g.NATSMessages, "budget-gossip publishes")
	require.NotNil(t, g.Budget)
	assert.Positive(t, g.Budget.GossipDenies, "heard counts deny identities")
	assert.LessOrEqual(t, g.MaxOveradmission, plain.MaxOveradmission+0.02, "gossip over-admits no further")
	assert.InEpsilon(t, float64(plain.Allowed), float64(g.Allowed), 0.01, "gossip serves the same quota")
	t.Logf("budget: allowed %d, round trips %d, worst %.2f; budget-gossip: %d, %d, %.2f, %d messages, %d denials heard",
		plain.Allowed, plain.RedisRoundTrips, plain.MaxOveradmission, g.Allowed, g.RedisRoundTrips, g.MaxOveradmission, g.NATSMessages, g.Budget.GossipDenies)
}
