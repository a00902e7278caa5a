package local

import (
	"runtime"
	"testing"

	"github.com/edgelimit/edgelimit/core"
)

// BenchmarkMemoryPerIdentity reports the Go heap grown per identity held,
// key, LRU entry, map slot and state included, for 100,000 identities with
// keys like "user:NNNNNN". Run with -benchtime 1x.
func BenchmarkMemoryPerIdentity(b *testing.B) {
	for _, a := range core.Algorithms {
		b.Run(a.String(), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.ReportMetric(heapPerIdentity(b, a), "bytes/identity")
			}
		})
	}
}

func heapPerIdentity(b *testing.B, a core.Algorithm) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := warmLimiter(b, a)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(l)
	return float64(after.HeapAlloc-before.HeapAlloc) / benchKeys
}
