package main

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edgelimit/edgelimit/bench/peers"
)

// outcome counts what a measured loop saw besides time.
type outcome struct {
	denied atomic.Int64
	errors atomic.Int64
	first  atomic.Value // first error, for the report
}

func (o *outcome) record(ok bool, err error) {
	if err != nil {
		if o.errors.Add(1) == 1 {
			o.first.Store(err.Error())
		}
		return
	}
	if !ok {
		o.denied.Add(1)
	}
}

// serialLoop measures d called from one goroutine.
func serialLoop(d peers.Decider, ks *keySet, o *outcome) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			o.record(d(ctx, ks.at(i)))
		}
	}
}

// parallelLoop measures d under b.RunParallel: one goroutine per
// GOMAXPROCS, each walking the order from its own offset.
func parallelLoop(d peers.Decider, ks *keySet, o *outcome) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		var seq atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := int(seq.Add(1)) << 18
			for pb.Next() {
				o.record(d(ctx, ks.at(i)))
				i++
			}
		})
	}
}

// callersLoop measures d with exactly c concurrent callers sharing b.N
// calls, each taking the next key of the order.
func callersLoop(d peers.Decider, ks *keySet, c int, o *outcome) func(*testing.B) {
	return func(b *testing.B) {
		ctx := context.Background()
		var next atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		for g := 0; g < c; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := next.Add(1) - 1
					if i >= int64(b.N) {
						return
					}
					o.record(d(ctx, ks.at(int(i))))
				}
			}()
		}
		wg.Wait()
	}
}

// figure is the median over rounds of one measured row.
type figure struct {
	ns     float64 // ns per operation
	allocs float64 // allocations per operation
	n      int     // rounds measured
}

// perSecond is the operations per second the figure stands for.
func (f figure) perSecond() float64 {
	if f.ns <= 0 {
		return 0
	}
	return 1e9 / f.ns
}

// medianOf reduces the rounds of one row to its median figures.
func medianOf(rs []testing.BenchmarkResult) figure {
	if len(rs) == 0 {
		return figure{}
	}
	ns := make([]float64, len(rs))
	al := make([]float64, len(rs))
	for i, r := range rs {
		ns[i] = float64(r.T.Nanoseconds()) / float64(max(r.N, 1))
		al[i] = float64(r.MemAllocs) / float64(max(r.N, 1))
	}
	return figure{ns: median(ns), allocs: median(al), n: len(rs)}
}

func median(v []float64) float64 {
	sort.Float64s(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
