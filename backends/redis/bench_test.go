package redis

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchKeys is how many identities the benchmarks spread their calls over.
const benchKeys = 10_000

// BenchmarkRedisAllow measures decisions per second at a private Redis,
// serial and with 64 concurrent callers (b.RunParallel), with and without
// implicit pipelining. Small enough for CI: go test -bench RedisAllow
// -benchtime 2000x ./backends/redis/
func BenchmarkRedisAllow(b *testing.B) {
	c, _ := redistest.Client(b)
	pool := goredis.NewClient(&goredis.Options{Addr: c.Options().Addr, PoolSize: 64})
	b.Cleanup(func() { pool.Close() })
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	lim := core.PerWindow(1_000_000, time.Minute)
	for _, mode := range []struct {
		name string
		opts []Option
	}{
		{"plain", nil},
		{"pipelined", []Option{WithPipelining(50*time.Microsecond, 64)}},
	} {
		l := newLimiter(b, pool, lim, mode.opts...)
		b.Run(mode.name+"/serial", func(b *testing.B) { benchSerial(b, l, keys) })
		b.Run(mode.name+"/parallel64", func(b *testing.B) { benchParallel(b, l, keys) })
	}
}

func benchSerial(b *testing.B, l *Limiter, keys []string) {
	ctx := context.Background()
	start := time.Now()
	i := 0
	for b.Loop() {
		_, err := l.Allow(ctx, keys[i%len(keys)])
		require.NoError(b, err)
		i++
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "decisions/s")
}

func benchParallel(b *testing.B, l *Limiter, keys []string) {
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(64 / max(1, parallelProcs()))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			_, err := l.Allow(ctx, keys[i%int64(len(keys))])
			if !assert.NoError(b, err) {
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
}

// parallelProcs is GOMAXPROCS, the goroutines per SetParallelism unit.
func parallelProcs() int { return runtime.GOMAXPROCS(0) }
