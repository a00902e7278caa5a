package local

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/stretchr/testify/require"
)

// benchKeys is the number of warm identities the benchmarks draw from: large
// enough that the map lookup and cache misses show, as in production.
const benchKeys = 100_000

var benchKeySet = func() []string {
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i*7919)
	}
	return keys
}()

// benchOrder is a fixed pseudo-random order of key indexes, so consecutive
// calls touch unrelated memory as real traffic does.
var benchOrder = func() []int32 {
	r := rand.New(rand.NewPCG(1, 2))
	order := make([]int32, 1<<20)
	for i := range order {
		order[i] = int32(r.IntN(benchKeys))
	}
	return order
}()

// benchKey returns the i-th key of the benchmark's traffic.
func benchKey(i int) string { return benchKeySet[benchOrder[i&(len(benchOrder)-1)]] }

var benchNow = time.Unix(1_700_006_400, 0)

// benchLimit admits every benchmark call, so the path measured is the
// counting one, never an early deny.
func benchLimit(a core.Algorithm) core.Limit {
	return core.Limit{Max: 1 << 30, Window: 24 * time.Hour, Algorithm: a}
}

func warmLimiter(b *testing.B, a core.Algorithm) *Limiter {
	b.Helper()
	l, err := New(benchLimit(a))
	require.NoError(b, err)
	for _, k := range benchKeySet {
		_, err := l.AllowN(context.Background(), k, benchNow, 1)
		require.NoError(b, err)
	}
	return l
}

// BenchmarkAllowN measures one decision on a warm key, serially.
func BenchmarkAllowN(b *testing.B) {
	for _, a := range []core.Algorithm{core.SlidingWindow, core.FixedWindow, core.TokenBucket} {
		b.Run(a.String(), func(b *testing.B) {
			l := warmLimiter(b, a)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l.AllowN(ctx, benchKey(i), benchNow, 1)
			}
		})
	}
}

// BenchmarkAllowNParallel measures decisions on warm keys from all cores.
func BenchmarkAllowNParallel(b *testing.B) {
	for _, a := range []core.Algorithm{core.SlidingWindow, core.FixedWindow, core.TokenBucket} {
		b.Run(a.String(), func(b *testing.B) {
			l := warmLimiter(b, a)
			ctx := context.Background()
			var seq atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seq.Add(1)) << 18
				for pb.Next() {
					l.AllowN(ctx, benchKey(i), benchNow, 1)
					i++
				}
			})
		})
	}
}

// warmBareLRU is the baseline: golang-lru/v2's thread-safe Cache, one lock,
// holding the same keys. Like the limiter it stores copies of the keys, so
// neither gains from comparing a string with itself.
func warmBareLRU(b *testing.B) *lru.Cache[string, *core.WindowState] {
	b.Helper()
	c, err := lru.New[string, *core.WindowState](DefaultCapacity)
	require.NoError(b, err)
	for _, k := range benchKeySet {
		c.Add(strings.Clone(k), &core.WindowState{})
	}
	return c
}

// BenchmarkBareLRUGet is the baseline for BenchmarkAllowN: a bare
// lru.Cache.Get on the same keys, no decision at all.
func BenchmarkBareLRUGet(b *testing.B) {
	c := warmBareLRU(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Get(benchKey(i))
	}
}

// BenchmarkBareLRUGetParallel is the baseline for BenchmarkAllowNParallel.
func BenchmarkBareLRUGetParallel(b *testing.B) {
	c := warmBareLRU(b)
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) << 18
		for pb.Next() {
			c.Get(benchKey(i))
			i++
		}
	})
}
