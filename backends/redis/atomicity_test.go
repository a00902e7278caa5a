package redis

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
)

// hammerTimeout bounds each call of a limiter whose test loads Redis
// (64 callers on one key, a cluster, long histories) and is not about
// deadlines: far past any round trip, so a loaded machine under the race
// detector never meets it (the default second did, and such tests then
// failed for a reason they do not test). Deadlines have tests of their own.
const hammerTimeout = time.Minute

// hammer sends workers × each single-unit requests for one key at one fixed
// now, concurrently, and returns how many were admitted.
func hammer(t *testing.T, l *Limiter, key string, workers, each int) int64 {
	t.Helper()
	now := time.UnixMilli(windowZero + 1234)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				d, err := l.AllowN(context.Background(), key, now, 1)
				if !assert.NoError(t, err) {
					return
				}
				if d.Allowed {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return admitted.Load()
}

// TestAtomicity: 64 goroutines × 50 requests on one key, limit 1000, fixed
// now: exactly 1000 admitted, for every algorithm, with and without
// pipelining.
func TestAtomicity(t *testing.T) {
	c, _ := redistest.Client(t)
	c2 := goredis.NewClient(&goredis.Options{Addr: c.Options().Addr, PoolSize: 64})
	t.Cleanup(func() { c2.Close() })
	for _, lim := range everyLimit(core.PerWindow(1000, time.Minute)) {
		for _, pipe := range []bool{false, true} {
			var opts []Option
			if pipe {
				opts = append(opts, WithPipelining(100*time.Microsecond, 32))
			}
			l := newLimiter(t, c2, lim, append(opts, WithExpirySlack(time.Hour), WithTimeout(hammerTimeout))...)
			key := "hot:" + lim.String()
			if pipe {
				key += ":pipelined"
			}
			got := hammer(t, l, key, 64, 50)
			assert.Equal(t, int64(1000), got, "%s pipelining=%v: admitted %d of 3200, want exactly 1000", lim, pipe, got)
			if lim.Algorithm == core.SlidingLog {
				units, total := logUnits(t, c2, l.Key(key))
				assert.Equal(t, int64(1000), units, "log's members hold %d units, want 1000 (every admitted unit)", units)
				assert.Equal(t, int64(1000), total, "log's total says %d units, want 1000", total)
			}
		}
	}
}
