package local

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestConcurrentOneKeyExact: 64 goroutines × 50 requests on one key at one
// instant, limit 1000, admit exactly 1000 for every algorithm (run with
// -race).
func TestConcurrentOneKeyExact(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 1000, Window: time.Minute, Algorithm: a})
		now := epoch.Add(17 * time.Second)
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 64; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					d, err := l.AllowN(ctx, "hot", now, 1)
					if err != nil {
						t.Error(err)
						return
					}
					if d.Allowed {
						admitted.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if got := admitted.Load(); got != 1000 {
			t.Fatalf("admitted %d of 3200, want exactly 1000", got)
		}
	})
}

// TestConcurrentManyKeys mixes Allow, Peek, Reset, State, Len and new keys
// from many goroutines, for the race detector; each key still never passes
// its limit.
func TestConcurrentManyKeys(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 5, Window: time.Minute, Algorithm: a}, WithCapacity(4096), WithShards(4))
		keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		var admitted [8]atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < 200; i++ {
					k := (g + i) % len(keys)
					if d := mustAllow(t, l, keys[k], epoch, 1); d.Allowed {
						admitted[k].Add(1)
					}
					l.Peek(ctx, keys[k], epoch)
					l.State(keys[k])
					l.Len()
				}
			}(g)
		}
		wg.Wait()
		for k := range admitted {
			if got := admitted[k].Load(); got != 5 {
				t.Fatalf("key %q admitted %d, want 5", keys[k], got)
			}
		}
	})
}
