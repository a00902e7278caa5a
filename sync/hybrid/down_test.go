package hybrid

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestDeadMasterFallsBackOnlyItsIdentities: on a three-master cluster with
// one master killed, a Redis-decided request for an identity of the dead
// master falls back (core.ErrUnavailable, decided locally), while one for
// an identity of a live master is still decided at Redis, with no error,
// and a Sync still brings the live masters' hits to Redis while it reports
// the dead one's failure.
func TestDeadMasterFallsBackOnlyItsIdentities(t *testing.T) {
	e := newClusterEnv(t)
	n := e.node("a", func(c *Config) { c.Margin, c.RedisRetry = 0.99, time.Minute })
	ctx := context.Background()
	victim := e.cl.Node(0).Addr
	dead, live := idOn(t, n, victim, true), idOn(t, n, victim, false)
	if err := e.cl.Kill(0); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	for i := 0; i < 3; i++ { // the first is local (estimate 0), then at Redis
		d, err := n.AllowN(ctx, dead, now, 1)
		if i > 0 && (!errors.Is(err, core.ErrUnavailable) || !d.Allowed || d.Source != core.SourceLocal) {
			t.Fatalf("dead master's %q, call %d: %+v, %v; want a local fallback with core.ErrUnavailable", dead, i, d, err)
		}
	}
	for i := 0; i < 3; i++ {
		d, err := n.AllowN(ctx, live, now, 1)
		if err != nil || (i > 0 && d.Source != core.SourceRedis) {
			t.Fatalf("live master's %q, call %d: %+v, %v; want decided at Redis", live, i, d, err)
		}
	}
	if err := n.Sync(ctx, now); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Sync with a dead master: %v, want core.ErrUnavailable", err)
	}
	if got := e.redisTotal(live, n.windowOf(now)); got != 3 {
		t.Errorf("live master's identity holds %d in Redis, want 3", got)
	}
}

// idOn returns an identity served (on) or not served (!on) by the master at
// addr.
func idOn(t *testing.T, n *Node, addr string, on bool) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		id := fmt.Sprint("user:", i)
		if (n.store.Shard(context.Background(), id) == addr) == on {
			return id
		}
	}
	t.Fatalf("no identity with master %s == %v among 1000", addr, on)
	return ""
}

// windowOf is the window index of now for n.
func (n *Node) windowOf(now time.Time) int64 {
	idx, _ := n.position(core.Millis(now))
	return idx
}
