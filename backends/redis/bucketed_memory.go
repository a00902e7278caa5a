package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// MeasureBucketedMemoryPerIdentity reports the Redis used_memory grown per
// identity, in bytes, for n identities "user:00000000".. holding the state
// MeasureMemoryPerIdentity writes (43 units in the previous minute, 57 in
// this one, limit 100 per minute, sliding window counter) on the bucketed
// layout with the given bucket count, written by the bucketed script
// itself. The keys are deleted afterwards. client must be a single node
// that nothing else writes to meanwhile. n and buckets must be positive
// (buckets at most MaxBuckets), else an error matching core.ErrInvalid.
func MeasureBucketedMemoryPerIdentity(ctx context.Context, client goredis.UniversalClient, n, buckets int) (float64, error) {
	if n <= 0 || buckets <= 0 {
		return 0, fmt.Errorf("%w: n and buckets must be positive", core.ErrInvalid)
	}
	l, err := New(client, core.PerWindow(100, time.Minute), WithBuckets(buckets))
	if err != nil {
		return 0, err
	}
	if err := l.script.Load(ctx, client).Err(); err != nil {
		return 0, err
	}
	now := time.Now().UnixMilli()
	w := int64(60_000)
	seen := make(map[string]bool)
	return measureLayout(ctx, client, n, func(p goredis.Pipeliner, id string) []string {
		var keys []string
		for _, s := range []struct{ at, n int64 }{{now - w, 43}, {now, 57}} {
			r := l.request(id, s.at, s.n, true)
			l.script.EvalSha(ctx, p, r.keys, r.args...)
			// Each bucket's keys are listed once, by the first identity
			// writing them.
			for _, k := range []string{r.keys[0], l.WindowKey(id, s.at)} {
				if !seen[k] {
					seen[k] = true
					keys = append(keys, k)
				}
			}
		}
		return keys
	})
}
