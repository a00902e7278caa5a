package hybrid

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
)

// BenchmarkInflightShare measures, in one run, a local decision (AllowN on
// warm keys, every decision from the view) and the in-flight count alone
// (enter and exit, which every decision pays so Close can wait for it),
// both from parallel goroutines, and reports the count's cost as a share
// of a decision's ("share" of the decision sub-benchmark's ns/op, printed
// by the count's sub-benchmark).
func BenchmarkInflightShare(b *testing.B) {
	rdb, _ := redistest.Client(b)
	n, err := New(Config{PoP: "bench", Limit: core.PerWindow(1<<40, time.Hour), Redis: rdb, Resync: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close(context.Background())
	keys := make([]string, benchKeys)
	for i := range keys {
		keys[i] = fmt.Sprint("user:", i)
	}
	now := time.UnixMilli(1_800_000_000_000)
	for _, k := range keys {
		n.AllowN(context.Background(), k, now, 1)
	}
	var decision float64
	b.Run("decision", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				n.AllowN(context.Background(), keys[i%benchKeys], now, 1)
				i++
			}
		})
		decision = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("count", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if slot, err := n.enter(); err == nil {
					n.exit(slot)
				}
			}
		})
		if decision > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/decision, "share")
		}
	})
}
