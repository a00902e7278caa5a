package hybrid

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
)

// viewOwners lists by key every entry in n's view (cached or parked) with
// own counts in window idx's live windows: what a walk over the whole view
// finds, the ownList's reference.
func viewOwners(n *Node, idx int64) []string {
	var all []*entry
	for i := range n.cache.shards {
		s := &n.cache.shards[i]
		s.mu.Lock()
		for e := s.oldest; e != nil; e = e.newer {
			all = append(all, e)
		}
		s.mu.Unlock()
	}
	n.mu.Lock()
	for _, e := range n.parked {
		all = append(all, e)
	}
	n.mu.Unlock()
	var out []string
	for _, e := range all {
		e.mu.Lock()
		e.roll(idx)
		if e.own != (counts{}) {
			out = append(out, e.key)
		}
		e.mu.Unlock()
	}
	slices.Sort(out)
	return out
}

// TestOwnListFindsEveryOwnCount: over random admissions (local, and at
// Redis for identities gossip put near the limit), gossip about
// identities this PoP never admitted, Syncs, Resets, evictions (some
// parked, some lost beyond MaxPending) and window rolls, a sweep of the
// ownList returns exactly the entries a walk over the whole view finds
// with own counts, and after every Sync the list is not due (it holds
// under twice what its last sweep kept, or under minOwnSweep).
func TestOwnListFindsEveryOwnCount(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) {
		c.Capacity, c.MaxPending, c.Resync, c.Margin = 64, 16, 2*time.Second, 0.2
		c.Limit = core.PerWindow(20, 10*time.Second)
	})
	rng := rand.New(rand.NewPCG(3, 9))
	ctx := context.Background()
	now := t0
	for step := range 3000 {
		k := fmt.Sprint("id", rng.IntN(400))
		if rng.IntN(4) == 0 {
			k = "hot" // past the margin: Redis-decided admissions too
		}
		switch r := rng.IntN(100); {
		case r < 55:
			if _, err := n.AllowN(ctx, k, now, 1); err != nil {
				t.Fatalf("step %d: AllowN: %v", step, err)
			}
		case r < 85:
			idx, _ := n.position(n.ms(now))
			m := gossip.Message{PoP: "peer#1", SentAt: now, WindowMillis: n.w,
				Entries: []gossip.Entry{{Key: k, Window: idx, Count: int64(1 + rng.IntN(20))}}}
			n.ApplyGossip(m, now)
		case r < 95:
			mustSync(t, n, now)
			if n.owned.due() {
				t.Fatalf("step %d: %d listed after a Sync, %d kept by the last sweep: still due", step, len(n.owned.es), n.owned.kept)
			}
		default:
			if err := n.Reset(ctx, k); err != nil {
				t.Fatalf("step %d: Reset: %v", step, err)
			}
		}
		now = now.Add(time.Duration(rng.IntN(40)) * time.Millisecond)
		if step%50 == 0 {
			idx, _ := n.position(n.ms(now))
			var got []string
			for _, x := range n.sweepOwn(idx, func(*entry) bool { return true }) {
				got = append(got, x.key)
			}
			slices.Sort(got)
			if want := viewOwners(n, idx); !slices.Equal(got, want) {
				t.Fatalf("step %d: the own list finds %v, the view %v", step, got, want)
			}
		}
	}
	if s := n.Stats(); s.RedisDecisions == 0 || s.EvictedWithCounts == 0 || s.Resends == 0 || s.GossipSkipped == 0 {
		t.Fatalf("the run missed a case the list must follow: %+v", s)
	}
}
