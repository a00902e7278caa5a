package budget

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"
)

// soakRate is the soak's request rate in simulated time; the machine runs
// the requests as fast as it can.
var soakRate = flag.Int("soak.rate", 5000, "BenchmarkSoak: requests per simulated second")

// The soak's shape: 8 PoPs for 10 minutes of simulated time, limit 100 per
// 10 s; a calm majority of soakIdentities, each pinned to one PoP (id mod
// 8), takes four fifths of the requests (one request each about every 100
// simulated seconds: they live on free credit and leave the views), and
// soakAttackers identities spread over every PoP take the rest (each about
// 50 a second against a limit of 10 a second: contested all along).
const (
	soakPoPs       = 8
	soakDuration   = 10 * time.Minute
	soakIdentities = 400_000
	soakAttackers  = 20
)

// BenchmarkSoak is the budget limiter's long run (docs/tradeoffs.md §8),
// not a timed test: run it by hand,
//
//	go test -run '^$' -bench Soak -benchtime 1x ./sync/budget [-args -soak.rate 5000]
//
// It plays 10 minutes of simulated time through 8 Limiters (the
// production type, each with its own go-redis client on one real Redis and
// gossip over a real NATS), a manual clock driving them: every request is
// an AllowN at its simulated instant, and every 100 ms of simulated time
// each Limiter's Sync runs, as its loop would. It reports the decisions
// per wall second, the round trips saved, the heap after GC at the start,
// the middle and the end of the traffic, the identities the views hold,
// Redis' used_memory and keys, and the goroutines before building the
// Limiters and after closing them.
//
// It fails (b.Fatalf) when the goroutines do not come back after Close,
// when the heap grows by more than half in the second half (the views
// are in their steady state by then: growth is a leak), when the views
// hold more identities at the end than 1.5× the middle, or when a
// decision returns an error. Redis' figures are reported, not judged:
// its keys expire in wall time, which runs slower than the simulated.
func BenchmarkSoak(b *testing.B) {
	p := redistest.Start(b)
	ns := natstest.Start(b)
	for i := range b.N {
		soak(b, p.Addr, ns.URL, uint64(i+1))
	}
}

// soakFigures are what one soak measures.
type soakFigures struct {
	decisions, allowed, roundTrips int64
	wall                           time.Duration
	heap                           [3]uint64 // HeapInuse after GC: start, middle, end
	views                          [2]int    // identities in the views: middle, end
	redisMem                       [2]int64  // used_memory: middle, end
	redisKeys                      [2]int64  // DBSIZE: middle, end
	goBefore, goAfter              int
}

func soak(b *testing.B, redisAddr, natsURL string, seed uint64) {
	ctx := context.Background()
	var f soakFigures
	b.StopTimer()
	runtime.GC()
	f.goBefore = runtime.NumGoroutine()
	clk := core.NewManualClock(time.UnixMilli(1_800_000_000_000))
	ns := fmt.Sprintf("soak%d", seed)
	lims := make([]*Limiter, soakPoPs)
	clients := make([]*redis.Client, soakPoPs)
	conns := make([]*nats.Conn, soakPoPs)
	for p := range lims {
		clients[p] = redis.NewClient(&redis.Options{Addr: redisAddr})
		l, err := New(Config{PoP: fmt.Sprintf("pop%d", p), Limit: core.PerWindow(100, 10*time.Second), PoPs: soakPoPs, Namespace: ns}, clients[p], clk)
		if err != nil {
			b.Fatal(err)
		}
		nc, err := nats.Connect(natsURL, natstest.ClientOptions()...)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.UseNATS(nc); err != nil {
			b.Fatal(err)
		}
		lims[p], conns[p] = l, nc
	}
	admin := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer admin.Close()
	f.heap[0] = heapAfterGC()
	b.StartTimer()

	rng := rand.New(rand.NewPCG(seed, 0x50a4))
	total := int(soakDuration.Seconds()) * *soakRate
	start := clk.Now()
	next := time.Duration(0) // the next Sync instant
	elapsed0 := b.Elapsed()  // the timer runs only over the traffic
	for k := range total {
		at := soakDuration * time.Duration(k) / time.Duration(total)
		for next <= at {
			clk.Set(start.Add(next))
			for _, l := range lims {
				_ = l.Sync(ctx) // a failure is retried by the next Sync, as in the loop
			}
			next += 100 * time.Millisecond
		}
		clk.Set(start.Add(at))
		id := rng.IntN(soakIdentities)
		key, p := "c"+strconv.Itoa(id), id%soakPoPs
		if rng.IntN(5) == 0 {
			key, p = "a"+strconv.Itoa(rng.IntN(soakAttackers)), rng.IntN(soakPoPs)
		}
		d, err := lims[p].AllowN(ctx, key, clk.Now(), 1)
		if err != nil {
			b.Fatalf("request %d: %v", k, err)
		}
		f.decisions++
		if d.Allowed {
			f.allowed++
		}
		if k == total/2-1 {
			// the last request of window 29, as the end is of window 59:
			// light records live two windows, so the views are compared
			// at the same phase of a window
			b.StopTimer()
			f.heap[1] = heapAfterGC()
			f.views[0] = soakViews(lims)
			f.redisMem[0], f.redisKeys[0] = redisFigures(ctx, b, admin)
			b.StartTimer()
		}
	}
	b.StopTimer()
	f.wall = b.Elapsed() - elapsed0 // reported, never asserted
	f.heap[2] = heapAfterGC()
	f.views[1] = soakViews(lims)
	f.redisMem[1], f.redisKeys[1] = redisFigures(ctx, b, admin)
	for p, l := range lims {
		f.roundTrips += int64(l.Stats().RoundTrips)
		if err := l.Close(ctx); err != nil {
			b.Fatalf("pop %d: Close: %v", p, err)
		}
		conns[p].Close()
		_ = clients[p].Close()
	}
	f.goAfter = settledGoroutines(f.goBefore)
	f.report(b)
	b.StartTimer()
}

// soakViews is the identities the Limiters' views hold.
func soakViews(lims []*Limiter) int {
	n := 0
	for _, l := range lims {
		l.mu.Lock()
		n += l.m.Len()
		l.mu.Unlock()
	}
	return n
}

// redisFigures is Redis' used_memory and key count.
func redisFigures(ctx context.Context, b *testing.B, rdb *redis.Client) (mem, keys int64) {
	keys, err := rdb.DBSize(ctx).Result()
	if err != nil {
		b.Fatal(err)
	}
	return usedMemory(b, rdb), keys
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// settledGoroutines yields, at most 100,000 times (a count, not a
// time), for the goroutines to come back to want (connections' readers
// end after Close), and returns the last count.
func settledGoroutines(want int) int {
	n := runtime.NumGoroutine()
	for i := 0; n > want && i < 100_000; i++ {
		runtime.Gosched()
		if i%1000 == 999 {
			runtime.GC()
		}
		n = runtime.NumGoroutine()
	}
	return n
}

func (f *soakFigures) report(b *testing.B) {
	mib := func(v uint64) float64 { return float64(v) / (1 << 20) }
	b.ReportMetric(float64(f.decisions)/f.wall.Seconds(), "decisions/s")
	b.ReportMetric(100*(1-float64(f.roundTrips)/float64(f.decisions)), "%saved")
	b.ReportMetric(mib(f.heap[0]), "MiB-heap-start")
	b.ReportMetric(mib(f.heap[1]), "MiB-heap-mid")
	b.ReportMetric(mib(f.heap[2]), "MiB-heap-end")
	b.ReportMetric(float64(f.views[1]), "view-ids-end")
	b.ReportMetric(float64(f.redisMem[1])/(1<<20), "MiB-redis-end")
	b.Logf("%d decisions (%d allowed) in %.1f s of wall time; round trips %d; heap after GC %.1f / %.1f / %.1f MiB (start, middle, end); views %d / %d identities (middle, end); Redis used_memory %.1f / %.1f MiB, %d / %d keys; goroutines %d before, %d after Close",
		f.decisions, f.allowed, f.wall.Seconds(), f.roundTrips, mib(f.heap[0]), mib(f.heap[1]), mib(f.heap[2]),
		f.views[0], f.views[1], float64(f.redisMem[0])/(1<<20), float64(f.redisMem[1])/(1<<20), f.redisKeys[0], f.redisKeys[1], f.goBefore, f.goAfter)
	switch {
	case f.goAfter > f.goBefore:
		b.Fatalf("goroutines: %d before the Limiters, %d after Close", f.goBefore, f.goAfter)
	case float64(f.heap[2]) > 1.5*float64(f.heap[1]):
		b.Fatalf("heap grew from %.1f to %.1f MiB in the second half", mib(f.heap[1]), mib(f.heap[2]))
	case float64(f.views[1]) > 1.5*float64(f.views[0]):
		b.Fatalf("views grew from %d to %d identities in the second half", f.views[0], f.views[1])
	}
}
