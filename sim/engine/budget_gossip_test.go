package engine

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/nats-io/nats.go"
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

// TestBudgetGossipOnTheLimitersSubject runs budget-gossip with a NATS
// client listening where a budget.Limiter of the run's limit subscribes
// with UseNATS (budget.Subject of budget.Keyspace(Namespace, Limit)): it
// hears every message the simulated PoPs publish, so the simulator
// measures the gossip production sends. It fails when the simulator
// publishes on the Namespace alone (a subject no Limiter listens on).
func TestBudgetGossipOnTheLimitersSubject(t *testing.T) {
	ns, err := natsembed.Start()
	require.NoError(t, err, "an embedded NATS")
	t.Cleanup(ns.Stop)
	e := faultEnv(t, netmodel.Faults{})
	e.NATSURL = ns.URL()
	e.Trace, err = traffic.Generate(traffic.Config{Scenario: "spread-attack", PoPs: 4, Identities: 300,
		Requests: 6000, Limit: 20, Window: time.Second, Seed: 3})
	require.NoError(t, err)
	nc, err := nats.Connect(ns.URL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	heard := make(chan *nats.Msg, 1<<16)
	_, err = nc.ChanSubscribe(budget.Subject(budget.Keyspace(e.Namespace, e.Limit)), heard)
	require.NoError(t, err)
	require.NoError(t, nc.Flush(), "subscribed before the run publishes")
	r, err := Run(context.Background(), e, "budget-gossip")
	require.NoError(t, err)
	require.NoError(t, nc.Flush(), "every message published before the run ended has been delivered")
	require.Positive(t, r.NATSMessages, "the run gossips")
	assert.Equal(t, r.NATSMessages, int64(len(heard)), "a Limiter's subscription hears every message the simulated PoPs publish")
}
