package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
)

// TestClusterFailoverReachesPromotedReplica: on three masters with one
// replica each, the master of an identity is killed; while it is down the
// limiter answers core.ErrUnavailable with its fail mode, and once the
// replica is promoted it decides at the new master within seconds. Without
// the slot-map reload on error, go-redis would keep the dead address until
// its next periodic reload (60 s) and this test would time out.
func TestClusterFailoverReachesPromotedReplica(t *testing.T) {
	c, cl := redistest.ReplicatedCluster(t)
	l := newLimiter(t, c, core.PerWindow(1000, time.Minute), WithTimeout(300*time.Millisecond))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := l.Allow(ctx, "user:1"); err != nil {
			t.Fatal(err)
		}
	}
	victim, err := cl.MasterOf(l.Key("user:1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Kill(victim); err != nil {
		t.Fatal(err)
	}
	d, err := l.Allow(ctx, "user:1")
	if !errors.Is(err, core.ErrUnavailable) || d.Allowed || d.Source != core.SourceFailClosed {
		t.Fatalf("master down: %+v, %v; want a fail-closed denial with core.ErrUnavailable", d, err)
	}
	if err := cl.WaitHealthy(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	for failed := 0; ; failed++ {
		d, err = l.Allow(ctx, "user:1")
		if err == nil {
			t.Logf("decided at the promoted replica %s after promotion (%d calls failed meanwhile): %+v",
				time.Since(promoted).Round(time.Millisecond), failed, d)
			break
		}
		if !errors.Is(err, core.ErrUnavailable) {
			t.Fatalf("after failover: %v, want core.ErrUnavailable while not yet rerouted", err)
		}
		if time.Since(promoted) > 10*time.Second {
			t.Fatalf("still failing 10s after the replica was promoted: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !d.Allowed || d.Source != core.SourceRedis {
		t.Fatalf("after failover: %+v, want allowed by Redis", d)
	}
}
