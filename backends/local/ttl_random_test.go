package local

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
)

// ttlModel is one identity as the Redis backend keeps it: core's math on a
// state that a key holds, the key expiring once the monotonic time since
// its last counted write exceeds its TTL — the time until no request at the
// write's stamp or later can be counted in it, capped at the lifetime, plus
// the slack (the scripts' PX and PEXPIRE rule). A denied request or a peek
// leaves the TTL as it was.
type ttlModel struct {
	lim    core.Limit
	decide func(now time.Time, n int64, commit bool) core.Decision
	held   bool
	expiry int64 // monotonic ms after which the key is gone
}

func (m *ttlModel) step(now time.Time, mono, n int64, commit bool) core.Decision {
	if m.held && mono > m.expiry {
		m.decide, m.held = coreModel(m.lim), false
	}
	d := m.decide(now, n, commit)
	if commit && d.Allowed {
		ttl := min(max(d.ResetAfter.Milliseconds(), 1), lifetimeOf(m.lim).Milliseconds())
		m.held, m.expiry = true, mono+ttl+expirySlackMillis
	}
	return d
}

// TestClockStepsAgreeWithRedisTTL: one identity, requests (weights up to
// Max, one in ten a peek) on a wall clock that moves with the monotonic
// time but lags by up to five windows per request and is stepped now and
// then by up to a day either way, while the monotonic time advances in
// whole seconds. Every decision, and whether the state is held, equals
// ttlModel's: the local backend forgets a state exactly when Redis would
// expire its key, and keeps it whatever the stamps say until then. (With
// monotonic readings in whole seconds the slot's one-second rounding is
// exact; a single identity keeps the stamp sweep, which other tests cover,
// out of the comparison.) Catches: aging by stamps only (a step back
// locks out), treating a request lagging by more than the lifetime as
// finding no state (its own count is reset), a TTL stretched by the lag,
// a TTL refreshed by a denial or a peek, a missing or different slack,
// forgetting at the TTL's last millisecond instead of after it.
func TestClockStepsAgreeWithRedisTTL(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		for _, w := range []time.Duration{250 * time.Millisecond, time.Second, 1500 * time.Millisecond} {
			lim := core.Limit{Max: 5, Window: w, Algorithm: a}
			for seed := uint64(1); seed <= 40; seed++ {
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				clk := newSteppedClock(epoch)
				l := mustNew(t, lim, WithClock(clk))
				model := &ttlModel{lim: lim, decide: coreModel(lim)}
				wall := epoch
				for step := 0; step < 400; step++ {
					adv := time.Duration(0)
					if rng.IntN(2) == 0 {
						adv = time.Duration(1+rng.IntN(3)) * time.Second
					}
					clk.advanceMono(adv)
					wall = wall.Add(adv)
					switch rng.IntN(40) {
					case 0:
						wall = wall.Add(-time.Duration(rng.IntN(25)) * time.Hour)
					case 1:
						wall = wall.Add(time.Duration(rng.IntN(25)) * time.Hour)
					}
					now := wall.Add(-time.Duration(rng.Int64N(int64(5*w)/int64(250*time.Millisecond))) * 250 * time.Millisecond)
					n := 1 + rng.Int64N(lim.Max)
					commit := rng.IntN(10) != 0
					if !commit {
						n = 1 // a peek asks for one unit
					}
					want := model.step(now, clk.mono.Load(), n, commit)
					var got core.Decision
					var err error
					if commit {
						got, err = l.AllowN(ctx, "id", now, n)
					} else {
						got, err = l.Peek(ctx, "id", now)
					}
					require.NoError(t, err)
					require.Equal(t, want, got, "%s seed %d step %d: stamp %s, monotonic %d ms, n=%d commit=%v",
						lim, seed, step, now.Sub(epoch), clk.mono.Load(), n, commit)
					_, held := l.State("id")
					require.Equal(t, model.held && clk.mono.Load() <= model.expiry, held, "%s seed %d step %d: state held", lim, seed, step)
				}
			}
		}
	})
}
