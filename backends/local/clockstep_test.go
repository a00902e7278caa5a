package local

import (
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redisSlack is the Redis backend's default expiry slack (its default
// timeout, 1 s): the slack of the lifetimes below.
const redisSlack = time.Second

// keyLife is the TTL the Redis backend gives the key written by lim.Max
// units at the start of a window, with its default slack: its package doc
// ends it where the state stops mattering (sliding: the end of the next
// window; fixed: the end of the window; log: the newest stamp plus the
// window; bucket: the TAT, Max emission intervals on, in whole ms) plus
// the slack. A state is that key's state: a request stamped more than this
// before it finds the Redis key gone by then.
func keyLife(lim core.Limit) time.Duration {
	w := lim.Window
	switch lim.Algorithm {
	case core.SlidingWindow:
		return 2*w + redisSlack
	case core.TokenBucket:
		us := core.BucketInterval(lim) * lim.Max
		return time.Duration((us+999)/1000)*time.Millisecond + redisSlack
	}
	return w + redisSlack
}

// TestClockStepBackForgetsStateAfterItsLifetime: an identity spends its
// quota at stamps a day ahead (the wall clock stepped forward), then the
// clock is put right. A request stamped up to the key's lifetime before
// that state (a late request, a small correction) is counted in it, as
// core's math counts it; one stamped further back finds the identity
// absent, as the Redis backend does once the key's TTL has run out: it is
// decided, and from then on the identity counted, exactly as by a limiter
// that never saw the day-ahead stamps, instead of being denied for a day.
// A peek there reports the fresh quota and keeps the old state.
func TestClockStepBackForgetsStateAfterItsLifetime(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 10, Window: time.Minute, Algorithm: a}
		l := mustNew(t, lim)
		model := coreModel(lim)
		ahead := epoch.Add(24 * time.Hour) // a window's start
		life := keyLife(lim)

		require.True(t, mustAllow(t, l, "id", ahead, lim.Max).Allowed, "%d units a day ahead", lim.Max)
		model(ahead, lim.Max, true)
		for _, lag := range []time.Duration{time.Millisecond, life} {
			now := ahead.Add(-lag)
			want := model(now, 1, true)
			got := mustAllow(t, l, "id", now, 1)
			assert.Equal(t, want, got, "%s: a request %s before the spent state: local, core", a, lag)
			assert.False(t, got.Allowed, "%s: a request %s before the spent state: %+v", a, lag, got)
		}
		held, ok := l.State("id")
		require.True(t, ok)

		fresh := mustNew(t, lim) // the history after the correction only
		now := ahead.Add(-life - time.Millisecond)
		peek, err := l.Peek(ctx, "id", now)
		require.NoError(t, err)
		want, err := fresh.Peek(ctx, "id", now)
		require.NoError(t, err)
		assert.Equal(t, want, peek, "%s: a peek %s before the spent state: local, a fresh limiter", a, life+time.Millisecond)
		st, ok := l.State("id")
		require.True(t, ok)
		assert.Equal(t, held, st, "%s: the peek changed the state", a)

		for i := int64(0); i <= lim.Max; i++ {
			got := mustAllow(t, l, "id", now, 1)
			want := mustAllow(t, fresh, "id", now, 1)
			if !assert.Equal(t, want, got, "%s: unit %d at %s before the spent state: local, a fresh limiter", a, i+1, life+time.Millisecond) {
				break
			}
		}
		d := mustAllow(t, l, "id", now, 1)
		assert.False(t, d.Allowed, "%s: the corrected clock's quota spent: %+v", a, d)
		assert.LessOrEqual(t, d.RetryAfter, lim.Window, "%s: denied for at most a window, not a day: %+v", a, d)
		assert.Equal(t, uint64(0), l.Evictions(), "%s: nothing evicted", a)
	})
}

// TestSweepDropsStateOfAClockThatWasAhead: the idle sweep of an insert
// drops a state whose lifetime ended more than its 1 s grace after the
// inserting request's stamp — every request stamped up to 1 s later would
// find it absent — without counting an eviction, and keeps one that a
// request stamped at the inserting one's time is still counted in.
func TestSweepDropsStateOfAClockThatWasAhead(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		lim := core.Limit{Max: 10, Window: time.Minute, Algorithm: a}
		ahead := epoch.Add(24 * time.Hour)
		life := keyLife(lim)
		for _, tc := range []struct {
			lag  time.Duration
			kept bool
		}{{life, true}, {life + time.Second, true}, {life + time.Second + time.Millisecond, false}, {24 * time.Hour, false}} {
			l := mustNew(t, lim, WithCapacity(1024), WithShards(1))
			require.True(t, mustAllow(t, l, "ahead", ahead, lim.Max).Allowed)
			mustAllow(t, l, "other", ahead.Add(-tc.lag), 1) // its insert sweeps the tail
			_, ok := l.State("ahead")
			assert.Equal(t, tc.kept, ok, "%s: state a day ahead kept after an insert %s before it", a, tc.lag)
			assert.Equal(t, map[bool]int{true: 2, false: 1}[tc.kept], l.Len(), "%s: identities held after an insert %s before the state", a, tc.lag)
			assert.Equal(t, uint64(0), l.Evictions(), "%s: evictions", a)
		}
	})
}
