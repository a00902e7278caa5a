package engine

import (
	"context"
	"flag"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sim/natsembed"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sim/traffic"
)

// soakRate is the soak's request rate in simulated time; the machine runs
// them as fast as it can.
var soakRate = flag.Int("soak.rate", 5000, "BenchmarkSoak: requests per simulated second")

// The soak's shape: 8 PoPs of the hybrid for 10 minutes of simulated time,
// each PoP's view holding soakCapacity identities out of soakIdentities
// (a calm majority pinned to id mod 8, so every view overflows and the LRU
// and the pending bound are what hold memory down), and soakAttackers
// identities spread over every PoP taking a fifth of the requests.
const (
	soakPoPs       = 8
	soakDuration   = 10 * time.Minute
	soakCapacity   = 20_000
	soakIdentities = 400_000
	soakAttackers  = 20
)

// BenchmarkSoak is the long soak run (docs/tradeoffs.md §8), not a timed test: run it by hand,
//
//	go test -run '^$' -bench Soak -benchtime 1x ./sim/engine [-args -soak.rate 5000]
//
// It plays 10 minutes of simulated time through 8 hybrid PoPs (real Redis,
// real NATS, sync and gossip every 100 ms, margin 0.1) with no pause, and
// reports the decisions per wall second, the heap after GC at the start, the
// middle and the end of the traffic, the heap grown per identity the views
// hold (8 × soakCapacity), and the goroutines before building the PoPs and
// after closing them, which must be equal (b.Fatalf otherwise). It fails too
// when the heap grows by more than half in the second half: the views are
// full by then, so growth there is a leak, not the bounded cache.
func BenchmarkSoak(b *testing.B) {
	p := redistest.Start(b)
	ns, err := natsembed.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer ns.Stop()
	for i := range b.N {
		soak(b, p.Addr, ns.URL(), uint64(i+1))
	}
}

// soakFigures are what one soak measures.
type soakFigures struct {
	decisions, allowed, roundTrips, gossip int64
	wall                                   time.Duration
	heapStart, heapMid, heapEnd            runtime.MemStats
	goBefore, goAfter                      int
}

func soak(b *testing.B, redisAddr, natsURL string, seed uint64) {
	ctx := context.Background()
	e := soakEnv(b, redisAddr, natsURL, seed)
	var f soakFigures
	f.goBefore = runtime.NumGoroutine()
	s := &hybridSim{e: e, ctx: ctx, ids: map[string]int{}, out: newOutcome(0)}
	if err := s.open(true); err != nil {
		s.close()
		b.Fatal(err)
	}
	for p := range s.pops {
		s.agenda.add(event{at: e.SyncInterval * time.Duration(p) / soakPoPs, kind: evTick, pop: p})
	}
	b.StopTimer()
	f.heapStart = heapAfterGC()
	b.StartTimer()
	if err := s.soakTraffic(b, &f, seed); err != nil {
		s.close()
		b.Fatal(err)
	}
	b.StopTimer()
	f.heapEnd = heapAfterGC()
	s.tally()
	f.roundTrips, f.gossip = s.out.roundTrips, s.out.natsMsgs
	s.close()
	f.goAfter = settledGoroutines(f.goBefore)
	f.report(b)
	b.StartTimer()
}

// soakEnv is the soak's environment: a trace with no requests (they are
// made on the fly, so no trace sits in the heap) lasting soakDuration.
func soakEnv(b *testing.B, redisAddr, natsURL string, seed uint64) *Env {
	c := traffic.Config{Scenario: "soak", PoPs: soakPoPs, Identities: soakIdentities,
		Requests: int(soakDuration.Seconds()) * *soakRate, Limit: 100, Window: 10 * time.Second, Seed: seed}
	net, err := netmodel.WorldWide(soakPoPs, 5*time.Millisecond, 150*time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}
	e := NewEnv(&traffic.Trace{Config: c, Duration: soakDuration}, net)
	e.RedisAddr, e.NATSURL, e.Margin, e.Capacity = redisAddr, natsURL, 0.1, soakCapacity
	e.Namespace = "soak" + time.Now().Format("150405.000000")
	return e
}

// soakTraffic makes and decides the soak's requests at evenly spaced
// simulated times, running the PoPs' ticks and deliveries between them.
func (s *hybridSim) soakTraffic(b *testing.B, f *soakFigures, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0x50a4))
	total := s.e.Trace.Config.Requests
	began := time.Now()
	for k := range total {
		at := soakDuration * time.Duration(k) / time.Duration(total)
		if err := s.runUntil(at); err != nil {
			return err
		}
		id := rng.IntN(soakIdentities)
		p := id % soakPoPs
		if rng.IntN(5) == 0 {
			id, p = rng.IntN(soakAttackers), rng.IntN(soakPoPs)
		}
		ok, _, err := s.allow(p, s.e.Key(int32(id)), at, 1)
		if err != nil {
			return err
		}
		f.decisions++
		if ok {
			f.allowed++
		}
		if k == total/2 {
			b.StopTimer()
			pause := time.Now()
			f.heapMid = heapAfterGC()
			began = began.Add(time.Since(pause))
			b.StartTimer()
		}
	}
	f.wall = time.Since(began) // reported by the benchmark, never asserted
	return s.runUntil(soakDuration)
}

func (f *soakFigures) report(b *testing.B) {
	mib := func(m runtime.MemStats) float64 { return float64(m.HeapInuse) / (1 << 20) }
	held := float64(soakPoPs * soakCapacity)
	perID := float64(int64(f.heapEnd.HeapAlloc)-int64(f.heapStart.HeapAlloc)) / held
	rate := float64(f.decisions) / f.wall.Seconds()
	b.ReportMetric(rate, "decisions/s")
	b.ReportMetric(mib(f.heapStart), "heap-start-MiB")
	b.ReportMetric(mib(f.heapEnd), "heap-end-MiB")
	b.ReportMetric(perID, "B/identity")
	b.ReportMetric(float64(f.goAfter), "goroutines")
	b.Logf("soak: %d PoPs, %s simulated at %d req/s: %d decisions (%d allowed) in %.1fs wall = %.0f decisions/s (%.1f simulated s per wall s); "+
		"%d Redis round trips, %d gossip messages; heap in use after GC %.1f / %.1f / %.1f MiB (start / middle / end), live %.1f → %.1f MiB, "+
		"%.0f bytes per identity held (%d views × %d); goroutines %d before, %d after Close",
		soakPoPs, soakDuration, *soakRate, f.decisions, f.allowed, f.wall.Seconds(), rate,
		soakDuration.Seconds()/f.wall.Seconds(), f.roundTrips, f.gossip,
		mib(f.heapStart), mib(f.heapMid), mib(f.heapEnd),
		float64(f.heapStart.HeapAlloc)/(1<<20), float64(f.heapEnd.HeapAlloc)/(1<<20),
		perID, soakPoPs, soakCapacity, f.goBefore, f.goAfter)
	if f.goAfter != f.goBefore {
		var dump strings.Builder
		pprof.Lookup("goroutine").WriteTo(&dump, 1)
		b.Fatalf("goroutine leak: %d before, %d after Close\n%s", f.goBefore, f.goAfter, dump.String())
	}
	if grown := int64(f.heapEnd.HeapAlloc) - int64(f.heapMid.HeapAlloc); grown > int64(f.heapMid.HeapAlloc)/2 {
		b.Fatalf("live heap grew %d bytes in the second half (%d → %d): not bounded by the views",
			grown, f.heapMid.HeapAlloc, f.heapEnd.HeapAlloc)
	}
}

// heapAfterGC collects garbage and returns the memory statistics after.
func heapAfterGC() runtime.MemStats {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// settledGoroutines waits up to 10 s for the goroutine count to come down
// to want (closed connections end their goroutines asynchronously) and
// returns the last count seen.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(10 * time.Millisecond)
	}
}
