package article

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// Memory is table B.
type Memory struct {
	Requests                    int64   `json:"requests"`
	LogBytes                    int64   `json:"log_bytes"`
	SlidingBytes                int64   `json:"sliding_bytes"`
	Ratio                       float64 `json:"ratio"`
	Identities                  int     `json:"identities"`
	UsedMemoryPerIdentity       float64 `json:"used_memory_per_identity"`
	UsedMemoryPerIdentityTwoKey float64 `json:"used_memory_per_identity_two_key"`
}

// MeasureMemory sends requests single-unit requests (one per ms) from one
// identity through the exact log and through the sliding window counter,
// reads each one's key with MEMORY USAGE, then has backends/redis measure
// used_memory per identity over identities identities in our layout and in
// the article's two-key layout. The log's limit is requests, so it keeps
// every stamp, as the article's sorted set does.
func MeasureMemory(ctx context.Context, c goredis.UniversalClient, prefix string, requests int64, identities int) (Memory, error) {
	m := Memory{Requests: requests, Identities: identities}
	var err error
	logLimit := core.Limit{Max: requests, Window: time.Hour, Algorithm: core.SlidingLog}
	if m.LogBytes, err = keyBytes(ctx, c, logLimit, redis.DefaultPrefix, requests); err != nil {
		return m, err
	}
	if m.SlidingBytes, err = keyBytes(ctx, c, ArticleLimit, redis.DefaultPrefix, requests); err != nil {
		return m, err
	}
	if m.SlidingBytes > 0 {
		m.Ratio = float64(m.LogBytes) / float64(m.SlidingBytes)
	}
	m.UsedMemoryPerIdentity, m.UsedMemoryPerIdentityTwoKey, err =
		redis.MeasureMemoryPerIdentity(ctx, c, identities)
	return m, err
}

// keyBytes sends n requests of one identity through a limiter of l and
// returns MEMORY USAGE of its key (SAMPLES 0, so the sorted set is measured
// whole rather than estimated from 5 members), then deletes the key.
func keyBytes(ctx context.Context, c goredis.UniversalClient, l core.Limit, prefix string, n int64) (int64, error) {
	lim, err := redis.New(c, l, redis.WithPrefix(prefix), redis.WithTimeout(30*time.Second))
	if err != nil {
		return 0, err
	}
	defer lim.Reset(ctx, "user:42")
	if err := burst(ctx, lim, n); err != nil {
		return 0, err
	}
	return c.MemoryUsage(ctx, lim.Key("user:42"), 0).Result() // SAMPLES 0: every element, not an estimate
}

// burstWorkers is how many callers send burst's requests at once.
const burstWorkers = 8

// burst sends n requests of "user:42", one per ms ending now, from
// burstWorkers concurrent callers.
func burst(ctx context.Context, lim *redis.Limiter, n int64) error {
	end := time.Now().UnixMilli()
	errs := make(chan error, burstWorkers)
	for w := range int64(burstWorkers) {
		go func() {
			var err error
			for i := w; i < n && err == nil; i += burstWorkers {
				_, err = lim.AllowN(ctx, "user:42", time.UnixMilli(end-n+1+i), 1)
			}
			errs <- err
		}()
	}
	var first error
	for range burstWorkers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
