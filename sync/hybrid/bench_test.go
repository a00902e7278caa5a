package hybrid

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

const benchKeys = 1000

// BenchmarkDecisions runs, in one run, hybrid decisions on warm keys and
// pure-Redis decisions (the hybrid's decide script, one call per decision)
// and reports decisions/s and Redis round trips per decision for each.
func BenchmarkDecisions(b *testing.B) {
	rdb, _ := redistest.Client(b)
	lim := core.PerWindow(1<<40, time.Hour)
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = fmt.Sprint("user:", i)
	}
	now := time.UnixMilli(1_800_000_000_000)
	b.Run("hybrid", func(b *testing.B) {
		n, err := New(Config{PoP: "bench", Limit: lim, Redis: rdb, Margin: 0.1, Resync: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer n.Close(context.Background())
		for _, k := range keys {
			n.AllowN(context.Background(), k, now, 1)
		}
		start := n.Stats().RedisRoundTrips
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				n.AllowN(context.Background(), keys[i%benchKeys], now, 1)
				i++
			}
		})
		b.StopTimer()
		mustBenchSync(b, n, now)
		report(b, n.Stats().RedisRoundTrips-start)
	})
	b.Run("redis", func(b *testing.B) {
		s := reconcile.New(rdb, "bench", "p", lim.Window)
		var trips uint64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				a := reconcile.DecideArgs{Item: reconcile.Item{Key: keys[i%benchKeys], Index: 1},
					N: 1, Max: lim.Max, WindowMillis: lim.WindowMillis()}
				if _, _, err := s.Decide(context.Background(), a); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
		trips = uint64(b.N)
		b.StopTimer()
		report(b, trips)
	})
}

func mustBenchSync(b *testing.B, n *Node, now time.Time) {
	if err := n.Sync(context.Background(), now); err != nil {
		b.Fatal(err)
	}
}

func report(b *testing.B, trips uint64) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/decision")
}
