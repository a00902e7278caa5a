// Package netmodel is the simulator's modelled network: a round-trip time
// from each PoP to Redis and a one-way latency between every two PoPs
// (Model), each message's delay drawn from them with seeded jitter (Links),
// what goes wrong during a run (Faults: a Redis outage, a partitioned PoP,
// crashes, gossip loss and duplication) and PoP clock skew (Skews). Only
// the simulated clock ever sees these delays; no real traffic is slowed.
package netmodel

import (
	"fmt"
	"time"
)

// Model holds the modelled delays of one deployment. The zero value has no
// PoPs.
type Model struct {
	RedisRTT []time.Duration   // round trip from PoP i to Redis
	OneWay   [][]time.Duration // one-way delay from PoP i to PoP j; zero on the diagonal
}

// WorldWide spreads pops PoPs like a world-wide deployment: their round
// trips to Redis step evenly from lo (the PoP beside Redis) to hi (the one
// across the world), and they sit on a ring whose one-way delays go from
// lo/2 between neighbours to hi/2 between opposite PoPs.
func WorldWide(pops int, lo, hi time.Duration) (Model, error) {
	if pops < 1 || lo < 0 || hi < lo {
		return Model{}, fmt.Errorf("netmodel: need pops ≥ 1 and 0 ≤ lo ≤ hi, got %d, %s, %s", pops, lo, hi)
	}
	m := Model{RedisRTT: make([]time.Duration, pops), OneWay: make([][]time.Duration, pops)}
	for i := range pops {
		m.RedisRTT[i] = lo + step(hi-lo, i, pops-1)
		m.OneWay[i] = make([]time.Duration, pops)
		for j := range pops {
			if i != j {
				m.OneWay[i][j] = lo/2 + step((hi-lo)/2, ringDist(i, j, pops), pops/2)
			}
		}
	}
	return m, nil
}

// step is span × k / of, and 0 when of is 0.
func step(span time.Duration, k, of int) time.Duration {
	if of == 0 {
		return 0
	}
	return span * time.Duration(k) / time.Duration(of)
}

func ringDist(i, j, n int) int {
	d := i - j
	if d < 0 {
		d = -d
	}
	return min(d, n-d)
}
