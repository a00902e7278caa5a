package peers

import (
	"context"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// XRateMutex is golang.org/x/time/rate used the usual way for many
// identities: one *rate.Limiter per key (rate max/window, burst max) in a
// map under one sync.Mutex, created on first sight.
func XRateMutex(max int, window time.Duration) Decider {
	r := rate.Limit(float64(max) / window.Seconds())
	var mu sync.Mutex
	m := make(map[string]*rate.Limiter)
	return func(_ context.Context, key string) (bool, error) {
		mu.Lock()
		l, ok := m[key]
		if !ok {
			l = rate.NewLimiter(r, max)
			m[strings.Clone(key)] = l
		}
		mu.Unlock()
		return l.Allow(), nil
	}
}

// XRateSyncMap is XRateMutex with a sync.Map instead of the mutex and map:
// lock-free reads once every key exists.
func XRateSyncMap(max int, window time.Duration) Decider {
	r := rate.Limit(float64(max) / window.Seconds())
	var m sync.Map
	return func(_ context.Context, key string) (bool, error) {
		v, ok := m.Load(key)
		if !ok {
			v, _ = m.LoadOrStore(strings.Clone(key), rate.NewLimiter(r, max))
		}
		return v.(*rate.Limiter).Allow(), nil
	}
}
