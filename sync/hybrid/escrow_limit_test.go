package hybrid

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestEscrowHoldsTheLimitNotBelow: one PoP, no network delay, one
// identity at 5× a limit of 100 per 10 s, a Sync every 100 ms. With escrow
// every window after the first must admit what the article's rule admits
// (a unit passes while the estimate is below the limit), as the hybrid
// deciding at Redis does: 100. The sliding estimate is neutrally stable
// (with prev = 99 and 9.9 admissions a second it stays at 99), so an
// escrow that grants a unit less than the rule leaves settles at 99 per
// window for good, and every denial of a saturating identity becomes a
// false deny by the exact log. A script that floored the room did that.
func TestEscrowHoldsTheLimitNotBelow(t *testing.T) {
	for _, escrow := range []bool{false, true} {
		e := newEnv(t, false)
		clock := core.NewManualClock(t0)
		n, err := New(Config{PoP: "pa", Limit: core.PerWindow(100, 10*time.Second), Redis: e.rdb,
			Clock: clock, Resync: -1, Escrow: escrow, Margin: 0.1, Namespace: "lim"})
		if err != nil {
			t.Fatal(err)
		}
		perWindow := map[int64]int{}
		now := t0
		for step := range 3000 { // 50 requests a second for 60 s
			now = now.Add(20 * time.Millisecond)
			clock.Set(now)
			if step%5 == 0 {
				if err := n.Sync(context.Background(), now); err != nil {
					t.Fatal(err)
				}
			}
			d, err := n.AllowN(context.Background(), "k", now, 1)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				perWindow[now.UnixMilli()/10_000]++
			}
		}
		first, last := t0.UnixMilli()/10_000, now.UnixMilli()/10_000
		for w := first + 1; w < last; w++ {
			if perWindow[w] != 100 {
				t.Errorf("escrow %v: window %d admitted %d, want 100 (all windows: %v)", escrow, w-first, perWindow[w], perWindow)
			}
		}
		n.Close(context.Background())
	}
}
