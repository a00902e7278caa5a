package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwoLimitsOnePrefix: two limiters of one algorithm under one prefix —
// 10 per second with 1000 per hour (the common pair), 5 per second with
// 40 per minute, and two limits of one window but different Max — decide a
// random interleaved history of a few identities (both asked for one
// request, as middleware does, or only one of them; peeks among the
// requests; time jumping forward and back), each exactly as core's math
// decides for it alone. A Reset of one leaves the other's counts alone.
// Both layouts: one key per identity, and buckets (the window algorithms).
func TestTwoLimitsOnePrefix(t *testing.T) {
	c, _ := redistest.Client(t)
	pairs := [][2]core.Limit{
		{core.PerWindow(10, time.Second), core.PerWindow(1000, time.Hour)},
		{core.PerWindow(5, time.Second), core.PerWindow(40, time.Minute)},
		{core.PerWindow(5, time.Minute), core.PerWindow(12, time.Minute)},
	}
	layouts := []struct {
		name string
		n    int
	}{{"per-identity", 0}, {"bucketed", 2}}
	for _, layout := range layouts {
		for _, pair := range pairs {
			for _, a := range core.Algorithms {
				if layout.n > 0 && bucketScripts[a] == nil {
					continue // the log and the bucket keep one key per identity
				}
				pair[0].Algorithm, pair[1].Algorithm = a, a
				t.Run(fmt.Sprintf("%s/%s+%s", layout.name, pair[0], pair[1]), func(t *testing.T) {
					require.NoError(t, c.FlushAll(context.Background()).Err())
					twoLimits(t, c, pair, WithBuckets(layout.n), WithExpirySlack(time.Hour))
				})
			}
		}
	}
}

// twoLimits plays one interleaved history on two limiters of pair under the
// default prefix and checks each against its own model.
func twoLimits(t *testing.T, c *goredis.Client, pair [2]core.Limit, opts ...Option) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(pair[0].Max), uint64(pair[1].Max)))
	ids := []string{"user:1", "user:2", "user:3"}
	var lims [2]*Limiter
	models := [2]map[string]*model{{}, {}}
	for i, lim := range pair {
		lims[i] = newLimiter(t, c, lim, opts...)
		for _, id := range ids {
			models[i][id] = &model{limit: lim}
		}
	}
	w := min(pair[0].WindowMillis(), pair[1].WindowMillis())
	now := int64(1_700_000_000_000)
	var allowed, denied [2]int
	for step := 0; step < 600; step++ {
		now += timeStep(rng, w)
		id := ids[rng.IntN(len(ids))]
		commit := rng.IntN(100) < 90
		which := []int{0, 1} // both limits, in turn, as middleware asks them
		switch p := rng.IntN(10); {
		case p < 2:
			which = []int{0}
		case p < 4:
			which = []int{1}
		}
		for _, i := range which {
			n := int64(1)
			var got core.Decision
			var err error
			if commit {
				n = weight(rng, pair[i].Max)
				got, err = lims[i].AllowN(ctx, id, at(now), n)
			} else {
				got, err = lims[i].Peek(ctx, id, at(now))
			}
			want := models[i][id].decide(now, n, commit)
			require.NoError(t, err, "step %d limit %s", step, pair[i])
			require.True(t, sameDecision(got, want), "step %d, limit %s, id %s, now=%d n=%d commit=%v:\n redis %+v\n alone %+v",
				step, pair[i], id, now, n, commit, got, want)
			if got.Allowed {
				allowed[i]++
			} else {
				denied[i]++
			}
		}
	}
	for i := range pair {
		assert.NotZero(t, allowed[i], "limit %s: %d allowed, %d denied: the history misses a path", pair[i], allowed[i], denied[i])
		assert.NotZero(t, denied[i], "limit %s: %d allowed, %d denied: the history misses a path", pair[i], allowed[i], denied[i])
	}

	// Resetting one limit's identity leaves the other limit's count of it.
	id := ids[0]
	require.NoError(t, lims[0].Reset(ctx, id))
	models[0][id] = &model{limit: pair[0]}
	for i := range pair {
		got, err := lims[i].Peek(ctx, id, at(now))
		require.NoError(t, err)
		want := models[i][id].decide(now, 1, false)
		require.True(t, sameDecision(got, want), "after resetting %s, limit %s peeks\n redis %+v\n alone %+v", pair[0], pair[i], got, want)
	}
}
