package local

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

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
			got := admitted[k].Load()
			require.Equal(t, int64(5), got, "key %q admitted %d, want 5", keys[k], got)
		}
	})
}
