package engine

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"
)

func TestHybridSavesRoundTripsAndGossips(t *testing.T) {
	_, p := redistest.Client(t)
	ns, err := natsembed.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Stop()
	results := map[string]Result{}
	for i, mode := range []string{"hybrid", "hybrid", "hybrid-nogossip", "local"} {
		e := testEnv(t, "spread-attack")
		e.RedisAddr, e.NATSURL, e.Namespace = p.Addr, ns.URL(), fmt.Sprintf("run%d", i)
		e.Margin = 0.1
		r, err := Run(context.Background(), e, mode)
		if err != nil {
			t.Fatal(err)
		}
		dropMachine(&r)
		if prev, ok := results[mode]; ok && !reflect.DeepEqual(prev, r) {
			t.Fatalf("%s twice on one seed:\n%+v\n%+v", mode, prev, r)
		}
		results[mode] = r
	}
	h, ng, lc := results["hybrid"], results["hybrid-nogossip"], results["local"]
	if h.NATSMessages == 0 || h.NATSBytes == 0 || ng.NATSMessages != 0 {
		t.Fatalf("gossip: hybrid %d msgs, nogossip %d", h.NATSMessages, ng.NATSMessages)
	}
	if h.RoundTripsSavedPct <= 0 || h.RedisRoundTrips == 0 {
		t.Fatalf("hybrid saved %.1f%% with %d round trips", h.RoundTripsSavedPct, h.RedisRoundTrips)
	}
	if h.MaxOveradmission >= lc.MaxOveradmission || h.FalseAllows >= lc.FalseAllows {
		t.Fatalf("hybrid over-admits like local: %+v vs %+v", h, lc)
	}
}
