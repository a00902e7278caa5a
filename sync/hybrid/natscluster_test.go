package hybrid

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/nats-io/nats.go"
)

// routed waits until a message published on from reaches a subscriber on
// to: the route between their servers carries to's interest, and so its
// gossip subscription, made earlier on the same connection.
func routed(t *testing.T, from, to *nats.Conn) {
	t.Helper()
	subj := nats.NewInbox()
	got := make(chan struct{}, 1)
	sub, err := to.Subscribe(subj, func(*nats.Msg) {
		select {
		case got <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	flushNATS(t, to)
	// Publish again every 20 ms (pacing: a message sent before the route
	// existed is lost) until one arrives; the minute is for a hang only.
	deadline := time.Now().Add(time.Minute)
	for {
		_ = from.Publish(subj, nil)
		select {
		case <-got:
			return
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no route from %s to %s", from.ConnectedUrl(), to.ConnectedUrl())
		}
	}
}

// TestGossipOverNATSCluster: three PoPs, each connected to a different
// node of a three-node NATS cluster, gossip through the routes. Node 0
// (PoP a's) is shut down mid-run: a's client reconnects to another node,
// gossip goes on (a's and the others'), nothing is double counted; node 0
// is restarted and a PoP connected to it alone hears everyone again.
func TestGossipOverNATSCluster(t *testing.T) {
	e := newEnv(t, false)
	nc := natstest.StartCluster(t, 3)
	conns := []*nats.Conn{nc.Connect(t, 0), nc.Connect(t, 1), nc.Connect(t, 2)}
	var nodes []*Node
	for i, pop := range []string{"a", "b", "c"} {
		nodes = append(nodes, e.node(pop, func(c *Config) { c.NATS = conns[i] }))
	}
	for i := range conns {
		for j := range conns {
			if i != j {
				routed(t, conns[i], conns[j])
			}
		}
	}
	now := e.clock.Now()
	var total int64
	hits := func(n *Node, k int) {
		for i := 0; i < k; i++ {
			mustAllow(t, n, "k", now)
		}
		total += int64(k)
		if err := n.Gossip(now); err != nil {
			t.Fatalf("%s Gossip: %v", n.ID(), err)
		}
	}
	seen := func(what string, ns ...*Node) {
		t.Helper()
		for _, n := range ns {
			waitFor(t, fmt.Sprintf("%s: %s sees %d", what, n.ID(), total), func() bool {
				c, _ := n.Counts("k", now)
				return c == total
			})
		}
	}
	hits(nodes[0], 10)
	hits(nodes[1], 7)
	hits(nodes[2], 3)
	seen("all up", nodes...)

	nc.Servers[0].Shutdown()
	// b and c keep gossiping through node 1 and 2 while a reconnects.
	hits(nodes[1], 4)
	seen("node 0 down", nodes[2])
	waitFor(t, "a reconnects to another node", func() bool { return conns[0].IsConnected() })
	if u := conns[0].ConnectedUrl(); u == nc.Servers[0].URL {
		t.Fatalf("a still on the stopped node %s", u)
	}
	t.Logf("a reconnected to %s after node 0 stopped", conns[0].ConnectedUrl())
	routed(t, conns[1], conns[0])
	routed(t, conns[0], conns[2])
	hits(nodes[0], 5)
	hits(nodes[2], 2)
	hits(nodes[1], 1) // repeats b's cumulative count, including what a missed while away
	seen("after failover", nodes...)

	nc.Restart(t, 0)
	late := e.node("d", func(c *Config) { c.NATS = nc.Servers[0].Connect(t) }) // node 0 only
	for _, c := range conns {
		routed(t, c, late.cfg.NATS)
	}
	hits(nodes[0], 1)
	hits(nodes[1], 1)
	hits(nodes[2], 1)
	seen("node 0 rejoined", append(nodes, late)...)
	for _, n := range nodes {
		if s := n.Stats(); s.GossipErrors != 0 {
			t.Errorf("%s: %d gossip publishes failed", n.ID(), s.GossipErrors)
		}
	}
	// Reconcile agrees with gossip: no double count.
	for _, n := range nodes {
		mustSync(t, n, now)
	}
	for _, n := range append(nodes, late) {
		mustSync(t, n, now)
		if c, _ := n.Counts("k", now); c != total {
			t.Fatalf("%s after reconcile: %d, want %d", n.ID(), c, total)
		}
	}
	if got := e.redisTotal("el", "k", e.idx(nodes[0])); got != total {
		t.Fatalf("Redis %d, want %d", got, total)
	}
}
