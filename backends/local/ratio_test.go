package local

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// ratioChunk is how many calls one phase of an interleaved comparison makes.
const ratioChunk = 1 << 14

// BenchmarkRatioVsBareLRU interleaves short phases of AllowN (sliding
// window) and of the bare lru.Cache.Get baseline on the same 100,000 keys and
// reports both times per call and their ratio, so the comparison holds on a
// shared, noisy machine where two separate benchmark runs see different load.
func BenchmarkRatioVsBareLRU(b *testing.B) {
	b.Run("serial", func(b *testing.B) { ratioBench(b, 1) })
	b.Run("parallel", func(b *testing.B) { ratioBench(b, runtime.GOMAXPROCS(0)) })
}

func ratioBench(b *testing.B, workers int) {
	l := warmLimiter(b, core.SlidingWindow)
	c := warmBareLRU(b)
	ctx := context.Background()
	ours := func(i int) { l.AllowN(ctx, benchKey(i), benchNow, 1) }
	bare := func(i int) { c.Get(benchKey(i)) }
	var tOurs, tBare time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += ratioChunk * workers {
		tOurs += phase(workers, done, ours)
		tBare += phase(workers, done, bare)
	}
	calls := float64(((b.N + ratioChunk*workers - 1) / (ratioChunk * workers)) * ratioChunk * workers)
	b.ReportMetric(float64(tOurs)/calls, "local-ns/call")
	b.ReportMetric(float64(tBare)/calls, "bare-ns/call")
	b.ReportMetric(float64(tOurs)/float64(tBare), "local/bare")
}

// phase runs ratioChunk calls of f in each of workers goroutines and
// returns the wall time taken: calls × workers ÷ time is the throughput.
func phase(workers, base int, f func(i int)) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(off int) {
			defer wg.Done()
			for i := 0; i < ratioChunk; i++ {
				f(off + i)
			}
		}(base + w<<18)
	}
	wg.Wait()
	return time.Since(start)
}
