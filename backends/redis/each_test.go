package redis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestAllowEachIsAllowNInOrder: every algorithm, asks over a few keys
// (so one pipeline holds several asks of a key) with random weights and
// times, each pipeline's first after SCRIPT FLUSH in turn (the EVAL
// retry): each decision is the one core's Go math makes for that key's
// history, as AllowN one at a time gives; one round trip per pipeline
// (two after a flush).
func TestAllowEachIsAllowNInOrder(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lim := range everyLimit(core.PerWindow(20, time.Second)) {
		l := newLimiter(t, c, lim, WithPrefix("each"))
		models := map[string]*model{}
		now := int64(1_700_000_000_000)
		for batch := range 20 {
			if batch%2 == 0 {
				err := c.ScriptFlush(ctx).Err()
				require.NoError(t, err)
			}
			asks := make([]Ask, 50)
			for i := range asks {
				now += rng.Int64N(40)
				asks[i] = Ask{Key: string(rune('a' + rng.IntN(4))), Now: at(now), N: 1 + rng.Int64N(3)}
			}
			before := l.Stats()
			out := make([]core.Decision, len(asks))
			err := l.AllowEach(ctx, asks, out)
			require.NoError(t, err, "%s", lim)
			for i, a := range asks {
				m := models[a.Key]
				if m == nil {
					m = &model{limit: lim}
					models[a.Key] = m
				}
				want := m.decide(core.Millis(a.Now), a.N, true)
				require.True(t, sameDecision(out[i], want), "%s, batch %d, ask %d (%+v): %+v, core's math %+v", lim, batch, i, a, out[i], want)
			}
			s := l.Stats()
			trips, want := s.RoundTrips-before.RoundTrips, uint64(2-batch%2)
			require.Equal(t, want, trips, "%s, batch %d: %d round trips, %d calls; want %d and 50", lim, batch, trips, s.Calls-before.Calls, want)
			require.Equal(t, uint64(50), s.Calls-before.Calls, "%s, batch %d: %d round trips, %d calls; want %d and 50", lim, batch, trips, s.Calls-before.Calls, want)
		}
	}
}

// TestAllowEachRefusesBadAsksUnsent: a bad key or weight anywhere fails
// the whole batch before anything reaches Redis.
func TestAllowEachRefusesBadAsksUnsent(t *testing.T) {
	c, _ := redistest.Client(t)
	l := newLimiter(t, c, core.PerWindow(5, time.Second))
	out := make([]core.Decision, 2)
	for _, asks := range [][]Ask{
		{{Key: "ok", Now: at(0), N: 1}, {Key: "", Now: at(0), N: 1}},
		{{Key: "ok", Now: at(0), N: 1}, {Key: "ok", Now: at(0), N: 6}},
	} {
		err := l.AllowEach(context.Background(), asks, out)
		require.ErrorIs(t, err, core.ErrInvalid, "%+v: %v, want core.ErrInvalid", asks, err)
	}
	n := dbsize(t, c)
	require.Equal(t, int64(0), n, "%d keys, %d round trips after refused batches", n, l.Stats().RoundTrips)
	require.Equal(t, uint64(0), l.Stats().RoundTrips, "%d keys, %d round trips after refused batches", n, l.Stats().RoundTrips)
}

// TestAllowEachOfNothingSendsNothing: no asks is no round trip (go-redis
// sends an empty pipeline nowhere), so Stats counts none. It catches the
// empty batch counted as one.
func TestAllowEachOfNothingSendsNothing(t *testing.T) {
	c, _ := redistest.Client(t)
	l := newLimiter(t, c, core.PerWindow(5, time.Second))
	require.NoError(t, l.AllowEach(context.Background(), nil, nil))
	require.Equal(t, Stats{}, l.Stats(), "no call, no round trip")
}
