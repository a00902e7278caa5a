package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoLuaAgreement drives a Redis limiter and core's Go math with the same
// random history of (now, n, commit) — time jumping forward, standing still
// and going backwards — and requires identical decisions at every step.
func TestGoLuaAgreement(t *testing.T) {
	c, _ := redistest.Client(t)
	shapes := []core.Limit{
		core.PerWindow(7, 997*time.Millisecond),
		core.PerWindow(100, time.Minute),
		core.PerWindow(1, 10*time.Millisecond),
		core.PerWindow(13, 1001*time.Millisecond),
		core.PerWindow(3, 7*time.Millisecond),
		core.PerWindow(1000, 5*time.Second),
		// Weights up to a million: one member per request in the log.
		core.PerWindow(1_000_000, time.Minute),
	}
	for _, shape := range shapes {
		for _, lim := range everyLimit(shape) {
			t.Run(lim.String(), func(t *testing.T) {
				// A long slack: Redis expires keys by its wall clock, core never.
				l := newLimiter(t, c, lim, WithExpirySlack(time.Hour))
				for seed := uint64(1); seed <= 3; seed++ {
					agree(t, l, seed, fmt.Sprintf("id:%d:%s", seed, lim))
				}
			})
		}
	}
}

// agree plays one random history of 300 steps on key.
func agree(t *testing.T, l *Limiter, seed uint64, key string) {
	t.Helper()
	lim := l.Limit()
	rng := rand.New(rand.NewPCG(seed, uint64(lim.Max)))
	m := &model{limit: lim}
	now := int64(1_700_000_000_000) + rng.Int64N(lim.WindowMillis()*10)
	var allowed, denied int
	defer func() {
		if assert.NotEqual(t, 0, allowed, "seed %d: %d allowed, %d denied: the history misses a path", seed, allowed, denied) {
			assert.NotEqual(t, 0, denied, "seed %d: %d allowed, %d denied: the history misses a path", seed, allowed, denied)
		}
	}()
	for step := 0; step < 300; step++ {
		now += timeStep(rng, lim.WindowMillis())
		n := weight(rng, lim.Max)
		commit := rng.IntN(100) < 85
		want := m.decide(now, n, commit)
		var got core.Decision
		var err error
		if commit {
			got, err = l.AllowN(context.Background(), key, at(now), n)
		} else {
			// Peek always asks for one unit.
			want = m.decide(now, 1, false)
			got, err = l.Peek(context.Background(), key, at(now))
		}
		require.NoError(t, err, "seed %d step %d", seed, step)
		require.True(t, sameDecision(got, want), "seed %d step %d now=%d n=%d commit=%v:\n redis %+v\n go    %+v", seed, step, now, n, commit, got, want)
		require.Equal(t, core.SourceRedis, got.Source, "seed %d step %d now=%d n=%d commit=%v:\n redis %+v\n go    %+v", seed, step, now, n, commit, got, want)
		require.Equal(t, time.Duration(0), got.Staleness, "seed %d step %d now=%d n=%d commit=%v:\n redis %+v\n go    %+v", seed, step, now, n, commit, got, want)
		if got.Allowed {
			allowed++
		} else {
			denied++
		}
	}
}

// timeStep moves time: mostly a little forward, sometimes not at all, a
// window or more ahead, or backwards.
func timeStep(rng *rand.Rand, w int64) int64 {
	switch p := rng.IntN(100); {
	case p < 15:
		return 0
	case p < 70:
		return rng.Int64N(w/5 + 1)
	case p < 80:
		return rng.Int64N(w + 1)
	case p < 88:
		return w + rng.Int64N(3*w)
	default:
		return -rng.Int64N(2*w + 1)
	}
}

// weight is mostly 1, sometimes up to max.
func weight(rng *rand.Rand, max int64) int64 {
	if rng.IntN(100) < 70 {
		return 1
	}
	return 1 + rng.Int64N(max)
}
