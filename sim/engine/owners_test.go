package engine

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"

	"github.com/stretchr/testify/require"
)

// TestOwnersSavesRoundTripsOnPinnedTraffic: on the pinned scenario the
// hybrid with Env.Owners (hybrid.Config.Owners) makes far fewer Redis
// round trips than without, with no more decision error than a tenth of a
// point above it and no higher worst over-admission.
func TestOwnersSavesRoundTripsOnPinnedTraffic(t *testing.T) {
	_, p := redistest.Client(t)
	ns, err := natsembed.Start()
	require.NoError(t, err)
	defer ns.Stop()
	results := map[bool]Result{}
	for _, owners := range []bool{false, true} {
		e := testEnv(t, "pinned")
		e.RedisAddr, e.NATSURL = p.Addr, ns.URL()
		e.Namespace += map[bool]string{false: "plain", true: "owners"}[owners]
		e.Margin, e.Owners = 0.1, owners
		r, err := Run(context.Background(), e, "hybrid")
		require.NoError(t, err)
		results[owners] = r
	}
	plain, own := results[false], results[true]
	require.False(t, own.RedisRoundTrips*2 > plain.RedisRoundTrips, "owners made %d round trips, without %d: want under half", own.RedisRoundTrips, plain.RedisRoundTrips)
	require.False(t, own.DecisionErrorPct > plain.DecisionErrorPct+0.1 || own.MaxOveradmission > plain.MaxOveradmission, "owners: error %.3f%%, worst %.2f; without: %.3f%%, %.2f", own.DecisionErrorPct, own.MaxOveradmission, plain.DecisionErrorPct, plain.MaxOveradmission)
	t.Logf("round trips %d -> %d, error %.3f -> %.3f%%", plain.RedisRoundTrips, own.RedisRoundTrips, plain.DecisionErrorPct, own.DecisionErrorPct)
}
