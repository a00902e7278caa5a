package local

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// TestLateWithinGraceAgreesWithCore: several identities on one shard,
// requests on a clock moving forward with each stamp up to 900 ms late
// (within the sweep's grace), weights up to Max: every decision equals
// core's math on that identity's own history.
func TestLateWithinGraceAgreesWithCore(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		for _, w := range []time.Duration{time.Millisecond * 50, time.Second, time.Minute} {
			lim := core.Limit{Max: 7, Window: w, Algorithm: a}
			for seed := uint64(1); seed <= 20; seed++ {
				rng := rand.New(rand.NewPCG(seed, 7))
				l := mustNew(t, lim, WithCapacity(4096), WithShards(1))
				models := map[string]func(time.Time, int64, bool) core.Decision{}
				clock := epoch
				for step := 0; step < 3000; step++ {
					clock = clock.Add(time.Duration(rng.Int64N(int64(w)/3 + 1)))
					id := fmt.Sprint("id", rng.IntN(12))
					now := clock.Add(-time.Duration(rng.Int64N(900)) * time.Millisecond)
					n := 1 + rng.Int64N(lim.Max)
					if models[id] == nil {
						models[id] = coreModel(lim)
					}
					want := models[id](now, n, true)
					got := mustAllow(t, l, id, now, n)
					require.Equal(t, want, got, "%s w=%s seed %d step %d %s at %s n=%d", a, w, seed, step, id, now.Sub(epoch), n)
				}
			}
		}
	})
}
