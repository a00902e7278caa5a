package engine

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"

	"github.com/stretchr/testify/require"
)

func TestHybridSavesRoundTripsAndGossips(t *testing.T) {
	_, p := redistest.Client(t)
	ns, err := natsembed.Start()
	require.NoError(t, err)
	defer ns.Stop()
	results := map[string]Result{}
	for i, mode := range []string{"hybrid", "hybrid", "hybrid-nogossip", "local"} {
		e := testEnv(t, "spread-attack")
		e.RedisAddr, e.NATSURL, e.Namespace = p.Addr, ns.URL(), fmt.Sprintf("run%d", i)
		e.Margin = 0.1
		r, err := Run(context.Background(), e, mode)
		require.NoError(t, err)
		dropMachine(&r)
		prev, ok := results[mode]
		require.False(t, ok && !reflect.DeepEqual(prev, r), "%s twice on one seed:\n%+v\n%+v", mode, prev, r)
		results[mode] = r
	}
	h, ng, lc := results["hybrid"], results["hybrid-nogossip"], results["local"]
	require.False(t, h.NATSMessages == 0 || h.NATSBytes == 0 || ng.NATSMessages != 0, "gossip: hybrid %d msgs, nogossip %d", h.NATSMessages, ng.NATSMessages)
	require.False(t, h.RoundTripsSavedPct <= 0 || h.RedisRoundTrips == 0, "hybrid saved %.1f%% with %d round trips", h.RoundTripsSavedPct, h.RedisRoundTrips)
	require.False(t, h.MaxOveradmission >= lc.MaxOveradmission || h.FalseAllows >= lc.FalseAllows, "hybrid over-admits like local: %+v vs %+v", h, lc)
}
