package engine

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/netmodel"

	"github.com/stretchr/testify/require"
)

// TestRoundTripsOfNoDelayStillWaited checks that a decision that went to
// Redis counts as waited (ClassResult.Waited, WorstSecond.Waited) by what
// it is, not by its modelled delay: on a network of round trips of 0 (as
// -rtt-min 0 gives the nearest PoP) every pure-Redis decision waited, and
// the budget mode's decision Calls did. It catches counting a request as
// waited by its latency being above 0, which counts none of them.
func TestRoundTripsOfNoDelayStillWaited(t *testing.T) {
	_, p := redistest.Client(t)
	e := testEnv(t, "mixed")
	e.RedisAddr, e.Worst = p.Addr, 3
	net, err := netmodel.WorldWide(e.Trace.Config.PoPs, 0, 0)
	require.NoError(t, err)
	e.Net = net
	waited := func(r Result) (classes, worst int64) {
		for _, c := range r.Classes {
			classes += c.Waited
		}
		for _, w := range r.Worst {
			for _, s := range w.Seconds {
				worst += s.Waited
			}
		}
		return classes, worst
	}
	for _, network := range []string{"honest", "ideal"} {
		e.Network, e.Namespace = network, t.Name()+"redis"+network
		r, err := Run(context.Background(), e, "redis")
		require.NoError(t, err)
		classes, worst := waited(r)
		require.Equal(t, r.Decisions, classes, "%s network: pure Redis' decisions that waited, summed over the classes", network)
		var asked int64 // requests of the worst identities: each went to Redis
		for _, w := range r.Worst {
			for _, q := range e.Trace.Requests {
				if q.ID == w.ID {
					asked++
				}
			}
		}
		require.Equal(t, asked, worst, "%s network: the worst identities' requests that waited", network)
	}
	e.Network, e.Namespace = "honest", t.Name()+"budget"
	r, err := Run(context.Background(), e, "budget")
	require.NoError(t, err)
	classes, _ := waited(r)
	require.GreaterOrEqual(t, classes, int64(r.Budget.BySource["redis"]), "budget: fewer waited than Redis decided")
	require.NotZero(t, r.Budget.BySource["redis"], "budget: Redis decided nothing")
}
