package redis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBucketedAgreesWithCoreAndKeys drives, for the sliding window counter
// and the fixed window, a bucketed limiter (identities crowded into 2
// buckets), a limiter with one key per identity and core's Go math with the
// same random history of (identity, now, n, commit) over 6 identities —
// time jumping forward, standing still and going backwards — and requires
// identical decisions from all three at every step. The identities share
// buckets, so a script reading or writing another identity's field, or
// another window's, shows as a disagreement; so does a miscounted previous
// window, a wrong clock-back search or a wrong roll.
func TestBucketedAgreesWithCoreAndKeys(t *testing.T) {
	c, _ := redistest.Client(t)
	shapes := []core.Limit{
		core.PerWindow(7, 997*time.Millisecond),
		core.PerWindow(100, time.Minute),
		core.PerWindow(1, 10*time.Millisecond),
		core.PerWindow(13, 1001*time.Millisecond),
		core.PerWindow(3, 7*time.Millisecond),
		core.PerWindow(1000, 5*time.Second),
	}
	for _, shape := range shapes {
		for _, a := range []core.Algorithm{core.SlidingWindow, core.FixedWindow} {
			lim := shape
			lim.Algorithm = a
			t.Run(lim.String(), func(t *testing.T) {
				for seed := uint64(1); seed <= 3; seed++ {
					require.NoError(t, c.FlushDB(context.Background()).Err(), "FLUSHDB before seed %d", seed)
					// A long slack: Redis expires keys by its wall clock, core never.
					b, err := New(c, lim, WithBuckets(2), WithExpirySlack(time.Hour))
					require.NoError(t, err, "New bucketed %s", lim)
					k, err := New(c, lim, WithBuckets(0), WithExpirySlack(time.Hour))
					require.NoError(t, err, "New per-identity %s", lim)
					agreeBucketed(t, b, k, seed)
				}
			})
		}
	}
}

// agreeBucketed plays one random history of 600 steps over 6 identities.
func agreeBucketed(t *testing.T, b, k *Limiter, seed uint64) {
	t.Helper()
	lim := b.Limit()
	w := lim.WindowMillis()
	rng := rand.New(rand.NewPCG(seed, uint64(lim.Max)))
	t.Logf("seed %d (rand.NewPCG(%d, %d))", seed, seed, lim.Max)
	ids := []string{"a", "b", "c", "d", "e:{x}", "}f"}
	states := make([]core.WindowState, len(ids))
	now := int64(1_700_000_000_000) + rng.Int64N(w*10)
	newest := now / w
	var allowed, denied, back int
	ctx := context.Background()
	for step := 0; step < 600; step++ {
		now += histStep(rng, w)
		if now/w < newest {
			back++
		}
		newest = max(newest, now/w)
		// The history stays within the clock-back search's reach.
		require.LessOrEqual(t, newest-now/w, int64(BucketHorizon), "seed %d step %d: clock went back past the horizon", seed, step)
		x := rng.IntN(len(ids))
		n := int64(1)
		if rng.IntN(100) >= 70 {
			n = 1 + rng.Int64N(lim.Max)
		}
		commit := rng.IntN(100) < 85
		var want, got, gotKey core.Decision
		var err, errKey error
		if commit {
			want = decideCore(&states[x], lim, now, n, true)
			got, err = b.AllowN(ctx, ids[x], at(now), n)
			gotKey, errKey = k.AllowN(ctx, ids[x], at(now), n)
		} else {
			want = decideCore(&states[x], lim, now, 1, false)
			got, err = b.Peek(ctx, ids[x], at(now))
			gotKey, errKey = k.Peek(ctx, ids[x], at(now))
		}
		require.NoError(t, err, "seed %d step %d: bucketed", seed, step)
		require.NoError(t, errKey, "seed %d step %d: per-identity", seed, step)
		want.Source = core.SourceRedis
		require.Equal(t, want, got, "seed %d step %d id %q now=%d n=%d commit=%v: bucketed (got) against core (want)",
			seed, step, ids[x], now, n, commit)
		require.Equal(t, gotKey, got, "seed %d step %d: bucketed (got) against one key per identity (want)", seed, step)
		if got.Allowed {
			allowed++
		} else {
			denied++
		}
	}
	require.Positive(t, allowed, "seed %d: the history never admitted", seed)
	require.Positive(t, denied, "seed %d: the history never denied", seed)
	require.Positive(t, back, "seed %d: the clock never went back", seed)
}

// decideCore is core's decision for the algorithm of lim.
func decideCore(s *core.WindowState, lim core.Limit, now, n int64, commit bool) core.Decision {
	if lim.Algorithm == core.FixedWindow {
		return s.DecideFixed(lim, now, n, commit)
	}
	return s.DecideSliding(lim, now, n, commit)
}

// histStep moves time: mostly a little forward, sometimes not at all, a
// window or more ahead, or backwards (up to two windows).
func histStep(rng *rand.Rand, w int64) int64 {
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

// TestBucketedClockBackAcrossWindows: an identity counted in a window
// several windows ahead of a later request (a clock that went back by more
// than one window) is found by the clock-back search, the request is
// decided in that newer window as core decides it, and another identity of
// the same bucket with nothing counted ahead is decided in its own window.
func TestBucketedClockBackAcrossWindows(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range []core.Algorithm{core.SlidingWindow, core.FixedWindow} {
		lim := core.Limit{Max: 5, Window: time.Second, Algorithm: a}
		l, err := New(c, lim, WithBuckets(1), WithExpirySlack(time.Hour))
		require.NoError(t, err)
		base := int64(1_700_000_000_000)
		var ahead, other core.WindowState
		for _, s := range []struct {
			id  string
			at  int64
			n   int64
			st  *core.WindowState
			why string
		}{
			{"ahead", base + 10_500, 5, &ahead, "fills window +10"},
			{"other", base + 2_000, 1, &other, "another identity, far behind the bucket's newest window"},
			{"ahead", base + 3_000, 1, &ahead, "seven windows back: decided in window +10 at elapsed 0"},
			{"ahead", base + 10_999, 1, &ahead, "window +10 again"},
			{"other", base + 2_500, 1, &other, "its own window +2"},
		} {
			want := decideCore(s.st, lim, s.at, s.n, true)
			want.Source = core.SourceRedis
			got, err := l.AllowN(ctx, s.id, at(s.at), s.n)
			require.NoError(t, err, s.why)
			assert.Equal(t, want, got, "%s %s at +%d ms: %s", a, s.id, s.at-base, s.why)
		}
	}
}
