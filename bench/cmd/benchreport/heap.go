package main

import (
	"context"
	"runtime"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"golang.org/x/time/rate"
)

// heapGrowth returns the Go heap grown per identity (runtime.MemStats
// HeapAlloc after a full GC) by what build returns, kept alive until
// measured. Keys are made inside build, so each holder pays for its own.
func heapGrowth(n int, build func() (any, error)) (float64, error) {
	before := liveHeap()
	v, err := build()
	if err != nil {
		return 0, err
	}
	after := liveHeap()
	runtime.KeepAlive(v)
	return float64(int64(after)-int64(before)) / float64(n), nil
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// localHeap fills our local backend with n identities holding the same
// state as the Redis layouts (43 units last minute, 57 this minute).
func localHeap(ctx context.Context, n int) (*local.Limiter, error) {
	l, err := local.New(core.PerWindow(100, time.Minute), local.WithCapacity(n))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for i := 0; i < n; i++ {
		k := memKey(i)
		if _, err := l.AllowN(ctx, k, now.Add(-time.Minute), 43); err != nil {
			return nil, err
		}
		if _, err := l.AllowN(ctx, k, now, 57); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// xrateHeap holds n x/time/rate limiters (100 per minute, burst 100), 57
// tokens spent on each, in a map keyed by identity.
func xrateHeap(n int) map[string]*rate.Limiter {
	m := make(map[string]*rate.Limiter)
	now := time.Now()
	for i := 0; i < n; i++ {
		l := rate.NewLimiter(rate.Limit(100.0/60), 100)
		l.AllowN(now, 57)
		m[memKey(i)] = l
	}
	return m
}
