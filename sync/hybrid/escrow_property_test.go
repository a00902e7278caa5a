package hybrid

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestEscrowNeverOverAdmits is the escrow invariant, on a real Redis, over
// random interleavings: PoPs (Config.Escrow, with a margin so wide that
// every admission must come from an allowance) admit, Sync, crash and
// restart as new incarnations, while time moves on by random steps across
// window rolls. After every admission the exact sliding estimate of
// everything admitted by every PoP — the current window plus the previous
// one weighted by what is left of it — stays below the limit + 1 (the
// article's rule admits a unit while the estimate is below the limit, so
// this is where pure Redis can be right after an admission), plus the
// units crashed PoPs admitted and never sent (the crash loss the hybrid
// has without escrow too): the PoPs together never admit what the limit
// does not leave. It fails on a script granting one unit more than that. The bound needs every PoP that spent an allowance to
// report it within one lease after the grant expired (Redis keeps counting
// an expired grant that long); here Syncs come at least every 450 ms on a
// 300 ms lease, and the test fails if Redis drops grants at their expiry.
func TestEscrowNeverOverAdmits(t *testing.T) {
	for seed := range uint64(6) {
		e := newEnv(t, false)
		clock := core.NewManualClock(t0)
		const limit, pops = 20, 4
		lim := core.PerWindow(limit, time.Second)
		mk := func(p int) *Node {
			n, err := New(Config{PoP: "p" + string(rune('a'+p)), Limit: lim, Redis: e.rdb, Clock: clock,
				Resync: -1, Escrow: true, Margin: 0.999, Lease: 300 * time.Millisecond,
				Namespace: "esc" + string(rune('a'+seed))})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		nodes := make([]*Node, pops)
		for p := range nodes {
			nodes[p] = mk(p)
		}
		r := rand.New(rand.NewPCG(seed, 7))
		// Odd seeds Sync rarely between the 450 ms ones, so views go stale
		// and what the PoPs admit between two Syncs rests on their grants
		// rather than on views refreshed every few steps (an over-grant the
		// even seeds' fresh views would hide fails there).
		syncOdds := 10
		if seed%2 == 1 {
			syncOdds = 100
		}
		var admitted []int64 // ms of every admitted unit
		now := t0
		grants := 0
		synced := make([]time.Time, pops)
		unsent := make([]int64, pops) // units admitted since the PoP's last Sync
		var lost int64                // units crashed PoPs admitted and never sent
		crashes := 0
		for step := range 3000 {
			now = now.Add(time.Duration(r.IntN(15)) * time.Millisecond)
			clock.Set(now)
			for p, n := range nodes { // the background loop: a Sync at least every 450 ms, more than a lease (300 ms) but within the grace Redis gives an expired grant (one more lease)
				if now.Sub(synced[p]) >= 450*time.Millisecond {
					if err := n.Sync(context.Background(), now); err != nil {
						t.Fatal(err)
					}
					synced[p], unsent[p] = now, 0
				}
			}
			p := r.IntN(pops)
			n := nodes[p]
			switch k := r.IntN(syncOdds); {
			case k < syncOdds-4:
				d, err := n.AllowN(context.Background(), "k", now, 1)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admitted = append(admitted, now.UnixMilli())
					unsent[p]++
					// The article's rule admits a unit while the estimate is
					// below the limit, so right after it the estimate is
					// below limit + 1; so must it be after the PoPs' units.
					if est := exactEstimate(admitted, now.UnixMilli(), 1000); est >= limit+1+float64(lost)-1e-9 {
						t.Fatalf("seed %d step %d: estimate of what the PoPs admitted %.3f >= limit %d + 1 + %d lost in crashes",
							seed, step, est, limit, lost)
					}
				}
			case k < syncOdds-1:
				if err := n.Sync(context.Background(), now); err != nil {
					t.Fatal(err)
				}
				synced[p], unsent[p] = now, 0
				grants++
			default: // a crash: dropped unflushed, a new incarnation takes its place
				lost += unsent[p]
				nodes[p], synced[p], unsent[p] = mk(p), now, 0
				crashes++
			}
		}
		if len(admitted) < 100 || grants == 0 || crashes == 0 {
			t.Fatalf("seed %d: only %d admissions over %d Syncs: the test exercised nothing", seed, len(admitted), grants)
		}
	}
}

// exactEstimate is the sliding estimate over exact counts at now (ms):
// units in now's window plus those of the window before, weighted by the
// share of it still inside (now − w, now].
func exactEstimate(at []int64, now, w int64) float64 {
	idx := now / w
	var cur, prev int64
	for _, t := range at {
		switch t / w {
		case idx:
			cur++
		case idx - 1:
			prev++
		}
	}
	return core.SlidingEstimate(cur, prev, now-idx*w, w)
}
