package redis

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// scriptFlushRun decides concurrently (4 goroutines × 150 decisions over 8
// identities, every algorithm but the bucket, alone and pipelined) while
// flush empties Redis' script cache every 2ms: no decision may fail, and
// each identity's remaining quota must account for every admitted unit.
func scriptFlushRun(t *testing.T, c goredis.UniversalClient, flush func() error) {
	ctx := context.Background()
	stop := make(chan struct{})
	var flushes atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond): // pacing of the flushes, not a bound: the checks count what was admitted
				if flush() == nil {
					flushes.Add(1)
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()
	now := time.Now()
	for i, opts := range [][]Option{nil, {WithPipelining(50*time.Microsecond, 16)}} {
		for _, a := range []core.Algorithm{core.SlidingWindow, core.FixedWindow, core.SlidingLog} {
			lim := core.Limit{Max: 10_000, Window: time.Hour, Algorithm: a}
			// a timeout only a hang reaches: the claim is that SCRIPT FLUSH
			// fails no decision, and on a loaded machine a call between two
			// flushes can take longer than DefaultTimeout (CI under load: one
			// decision of 600 hit the 1 s default)
			l := newLimiter(t, c, lim, append(opts, WithPrefix(fmt.Sprint("sf", i)), WithTimeout(30*time.Second))...)
			var wg sync.WaitGroup
			var failed atomic.Int64
			var firstErr atomic.Value
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 150; r++ {
						d, err := l.AllowN(ctx, fmt.Sprint("id", (r+g)%8), now, 1)
						if err != nil || !d.Allowed {
							failed.Add(1)
							firstErr.CompareAndSwap(nil, fmt.Sprintf("%+v %v", d, err))
						}
					}
				}()
			}
			wg.Wait()
			n := failed.Load()
			require.Equal(t, int64(0), n, "%s pipelined=%v: %d decisions failed under SCRIPT FLUSH, first: %v", a, i == 1, n, firstErr.Load())
			var want [8]int64
			for g := 0; g < 4; g++ {
				for r := 0; r < 150; r++ {
					want[(r+g)%8]++
				}
			}
			for k := 0; k < 8; k++ {
				d, err := l.Peek(ctx, fmt.Sprint("id", k), now)
				require.NoError(t, err, "%s id%d: %+v %v, want %d remaining", a, k, d, err, lim.Max-want[k])
				require.Equal(t, lim.Max-want[k], d.Remaining, "%s id%d: %+v %v, want %d remaining", a, k, d, err, lim.Max-want[k])
			}
		}
	}
	require.GreaterOrEqual(t, flushes.Load(), int64(3), "only %d SCRIPT FLUSH during the run", flushes.Load())
	t.Logf("%d SCRIPT FLUSH during the run, no decision failed", flushes.Load())
}

// TestScriptFlushMidRun: SCRIPT FLUSH while decisions are in flight on one
// node; every call reloads the script (EVAL after NOSCRIPT) and none fails.
func TestScriptFlushMidRun(t *testing.T) {
	c, _ := redistest.Client(t)
	scriptFlushRun(t, c, func() error { return c.ScriptFlush(context.Background()).Err() })
}

// TestScriptFlushMidRunCluster: the same on a three-master cluster, every
// master's script cache flushed.
func TestScriptFlushMidRunCluster(t *testing.T) {
	c, _ := redistest.Cluster(t)
	scriptFlushRun(t, c, func() error {
		return c.ForEachMaster(context.Background(), func(ctx context.Context, m *goredis.Client) error {
			return m.ScriptFlush(ctx).Err()
		})
	})
}
