package engine

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"
)

// TestOwnersSavesRoundTripsOnPinnedTraffic: on the pinned scenario the
// hybrid with Env.Owners (hybrid.Config.Owners) makes far fewer Redis
// round trips than without, with no more decision error than a tenth of a
// point above it and no higher worst over-admission.
func TestOwnersSavesRoundTripsOnPinnedTraffic(t *testing.T) {
	_, p := redistest.Client(t)
	ns, err := natsembed.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Stop()
	results := map[bool]Result{}
	for _, owners := range []bool{false, true} {
		e := testEnv(t, "pinned")
		e.RedisAddr, e.NATSURL = p.Addr, ns.URL()
		e.Namespace += map[bool]string{false: "plain", true: "owners"}[owners]
		e.Margin, e.Owners = 0.1, owners
		r, err := Run(context.Background(), e, "hybrid")
		if err != nil {
			t.Fatal(err)
		}
		results[owners] = r
	}
	plain, own := results[false], results[true]
	if own.RedisRoundTrips*2 > plain.RedisRoundTrips {
		t.Fatalf("owners made %d round trips, without %d: want under half", own.RedisRoundTrips, plain.RedisRoundTrips)
	}
	if own.DecisionErrorPct > plain.DecisionErrorPct+0.1 || own.MaxOveradmission > plain.MaxOveradmission {
		t.Fatalf("owners: error %.3f%%, worst %.2f; without: %.3f%%, %.2f",
			own.DecisionErrorPct, own.MaxOveradmission, plain.DecisionErrorPct, plain.MaxOveradmission)
	}
	t.Logf("round trips %d -> %d, error %.3f -> %.3f%%", plain.RedisRoundTrips, own.RedisRoundTrips, plain.DecisionErrorPct, own.DecisionErrorPct)
}
