package hybrid

import (
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/sync/gossip"
)

var (
	viewIdentities = flag.Int("view-identities", 20000, "identities for TestViewHeapPerIdentity (the at-scale figure: -args -view-identities=1000000 -view-peers=8,32)")
	viewPeers      = flag.String("view-peers", "1,8", "PoPs besides this one that TestViewHeapPerIdentity makes each identity known from, comma-separated")
)

// TestViewHeapPerIdentity measures the Go heap a Node's view holds per
// identity when P other PoPs have gossiped counts of it in two windows
// (the view keeps a record per peer). More peers must cost more.
//
//	go test -count=1 -run ViewHeapPerIdentity -v ./sync/hybrid/ -args -view-identities=1000000 -view-peers=8,32
func TestViewHeapPerIdentity(t *testing.T) {
	e := newEnv(t, false)
	prev := 0.0
	for _, ps := range strings.Split(*viewPeers, ",") {
		peers, err := strconv.Atoi(ps)
		if err != nil || peers < 1 || peers > MaxPeers {
			t.Fatalf("-view-peers %q", *viewPeers)
		}
		n := *viewIdentities
		before := heapInUse()
		node := e.node("a", func(c *Config) { c.Capacity = 2 * n }) // sharded LRU: room so no shard evicts
		idx := e.idx(node)
		for p := range peers {
			m := gossip.Message{PoP: fmt.Sprintf("pop%d#%08x", p, p), SentAt: t0, WindowMillis: 10_000}
			for i := range n {
				key := "user:" + strconv.Itoa(10_000_000+i)
				m.Entries = append(m.Entries, gossip.Entry{Key: key, Window: idx, Count: 1},
					gossip.Entry{Key: key, Window: idx - 1, Count: 1})
				if len(m.Entries) >= 4096 {
					node.ApplyGossip(m, t0)
					m.Entries = m.Entries[:0]
				}
			}
			node.ApplyGossip(m, t0)
		}
		if c, _ := node.Counts("user:10000000", t0); c != int64(peers) {
			t.Fatalf("%d peers: the view counts %d of an identity", peers, c)
		}
		if got := node.ViewLen(); got != n {
			t.Fatalf("%d peers: ViewLen %d, want the %d identities gossiped", peers, got, n)
		}
		per := float64(heapInUse()-before) / float64(n)
		runtime.KeepAlive(node)
		t.Logf("%d identities known from %d peers: %.0f bytes of Go heap per identity", n, peers, per)
		if per <= prev {
			t.Fatalf("%d peers: %.0f bytes per identity, not above %.0f with fewer", peers, per, prev)
		}
		prev = per
	}
}

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
