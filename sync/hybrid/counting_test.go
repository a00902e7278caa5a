package hybrid

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/sync/gossip"
)

// TestGossipIdempotence: duplicates, reordering and a lost message then a
// reconcile leave every PoP's view equal to the true count, never above.
func TestGossipIdempotence(t *testing.T) {
	e := newEnv(t, true)
	manual := func(c *Config) { c.ManualGossip = true }
	a, b, c := e.node("a", manual), e.node("b", manual), e.node("c", manual)
	now := e.clock.Now()
	var msgs []gossip.Message
	admitted := int64(0)
	for round := 0; round < 3; round++ {
		for i := 0; i <= round; i++ {
			mustAllow(t, a, "k", now)
			mustAllow(t, b, "k", now)
			admitted += 2
		}
		a.Gossip(now)
		b.Gossip(now)
		flushNATS(t, a.cfg.NATS)
		flushNATS(t, b.cfg.NATS)
		waitFor(t, "gossip at c", func() bool { return c.Stats().GossipReceived >= uint64(2*(round+1)) })
		msgs = append(msgs, c.TakeGossip()...)
	}
	check := func(what string, want int64) {
		t.Helper()
		if got, _ := c.Counts("k", now); got != want {
			t.Fatalf("%s: view %d, want %d", what, got, want)
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- { // reversed order
		c.ApplyGossip(msgs[i], now)
		c.ApplyGossip(msgs[i], now) // duplicate
		if got, _ := c.Counts("k", now); got > admitted {
			t.Fatalf("view %d above truth %d", got, admitted)
		}
	}
	check("all delivered reversed and twice", admitted)

	// One lost message: d misses a's last one, then a reconcile repairs it.
	d := e.node("d", manual)
	for _, m := range msgs[:len(msgs)-2] {
		d.ApplyGossip(m, now)
	}
	d.ApplyGossip(msgs[len(msgs)-1], now)
	if got, _ := d.Counts("k", now); got > admitted || got == admitted {
		t.Fatalf("with a lost message view %d, want below %d", got, admitted)
	}
	mustSync(t, a, now)
	mustSync(t, b, now)
	mustAllow(t, d, "k", now)
	admitted++
	mustSync(t, d, now)
	if got, _ := d.Counts("k", now); got != admitted {
		t.Fatalf("after reconcile view %d, want %d", got, admitted)
	}
}

// TestNoDoubleCount: 3 PoPs learn each other's hits by gossip and by
// reconcile, interleaved; after all flush every view and Redis hold exactly
// the admitted total.
func TestNoDoubleCount(t *testing.T) {
	e := newEnv(t, true)
	nodes := []*Node{e.node("a", nil), e.node("b", nil), e.node("c", nil)}
	now := e.clock.Now()
	r := rand.New(rand.NewPCG(7, 7))
	admitted := map[string]int64{}
	for step := 0; step < 300; step++ {
		n := nodes[r.IntN(3)]
		key := fmt.Sprint("id", r.IntN(5))
		if mustAllow(t, n, key, now).Allowed {
			admitted[key]++
		}
		switch r.IntN(20) {
		case 0:
			mustSync(t, n, now)
		case 1:
			n.Gossip(now)
		}
	}
	settle(t, e, nodes, now)
	for key, want := range admitted {
		if got := e.redisTotal("el", key, e.idx(nodes[0])); got != want {
			t.Fatalf("Redis %s = %d, want %d", key, got, want)
		}
		for _, n := range nodes {
			if got, _ := n.Counts(key, now); got != want {
				t.Fatalf("%s view of %s = %d, want %d", n.ID(), key, got, want)
			}
		}
	}
}

// settle gossips and syncs every node until gossip is delivered, then
// syncs again so every reply carries everything.
func settle(t *testing.T, e *env, nodes []*Node, now time.Time) {
	t.Helper()
	for _, n := range nodes {
		mustSync(t, n, now)
		if err := n.Gossip(now); err != nil {
			t.Fatalf("Gossip: %v", err)
		}
		flushNATS(t, n.cfg.NATS)
	}
	waitGossip(t, nodes)
}

// waitGossip waits until every node received every payload the others sent.
func waitGossip(t *testing.T, nodes []*Node) {
	t.Helper()
	var sent uint64
	for _, n := range nodes {
		sent += n.Stats().GossipSent
	}
	for _, n := range nodes {
		waitFor(t, "gossip delivery", func() bool {
			return n.Stats().GossipReceived+n.Stats().GossipSent >= sent
		})
	}
}
