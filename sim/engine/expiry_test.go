package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"

	"github.com/stretchr/testify/require"
)

// TestShortWindowRunsSurviveWallClockExpiry: Redis TTLs run on the wall
// clock while the simulation runs on virtual time, so with a 100ms window
// a run lasts many windows of wall time. Every mode that keeps state in
// Redis must still find it: two runs of one seed give the same figures,
// and pure Redis stays near its exact sliding-window over-admission.
func TestShortWindowRunsSurviveWallClockExpiry(t *testing.T) {
	_, p := redistest.Client(t)
	ns, err := natsembed.Start()
	require.NoError(t, err)
	defer ns.Stop()
	c := traffic.Config{Scenario: "mixed", PoPs: 4, Identities: 300, Requests: 20000,
		Limit: 100, Window: 100 * time.Millisecond, Seed: 3}
	tr, err := traffic.Generate(c)
	require.NoError(t, err)
	net, err := netmodel.WorldWide(c.PoPs, 5*time.Millisecond, 150*time.Millisecond)
	require.NoError(t, err)
	for _, mode := range []string{"redis", "budget", "budget-gossip"} {
		var rs [2]Result
		for i := range rs {
			e := NewEnv(tr, net)
			e.RedisAddr, e.NATSURL = p.Addr, ns.URL()
			e.SyncInterval = 10 * time.Millisecond
			e.Namespace = fmt.Sprintf("%s-%s-%d", t.Name(), mode, i)
			rs[i], err = Run(context.Background(), e, mode)
			require.NoError(t, err)
			dropMachine(&rs[i])
			// Let the wall clock run past every window's TTL between runs.
			time.Sleep(300 * time.Millisecond)
		}
		t.Logf("%s: %+v", mode, rs[0])
		require.Equal(t, rs[0], rs[1], "%s, one seed, two figures", mode)
		if mode == "redis" {
			require.LessOrEqual(t, rs[0].MaxOveradmission, 1.2, "redis: max over-admission with a 100ms window, want ≤ 1.2")
		}
	}
}
