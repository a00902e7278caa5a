package redis

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
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
				if err := c.ScriptFlush(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			}
			asks := make([]Ask, 50)
			for i := range asks {
				now += rng.Int64N(40)
				asks[i] = Ask{Key: string(rune('a' + rng.IntN(4))), Now: at(now), N: 1 + rng.Int64N(3)}
			}
			before := l.Stats()
			out := make([]core.Decision, len(asks))
			if err := l.AllowEach(ctx, asks, out); err != nil {
				t.Fatalf("%s: %v", lim, err)
			}
			for i, a := range asks {
				m := models[a.Key]
				if m == nil {
					m = &model{limit: lim}
					models[a.Key] = m
				}
				if want := m.decide(core.Millis(a.Now), a.N, true); !sameDecision(out[i], want) {
					t.Fatalf("%s, batch %d, ask %d (%+v): %+v, core's math %+v", lim, batch, i, a, out[i], want)
				}
			}
			s := l.Stats()
			if trips, want := s.RoundTrips-before.RoundTrips, uint64(2-batch%2); trips != want || s.Calls-before.Calls != 50 {
				t.Fatalf("%s, batch %d: %d round trips, %d calls; want %d and 50", lim, batch, trips, s.Calls-before.Calls, want)
			}
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
		if err := l.AllowEach(context.Background(), asks, out); !errors.Is(err, core.ErrInvalid) {
			t.Fatalf("%+v: %v, want core.ErrInvalid", asks, err)
		}
	}
	if n := dbsize(t, c); n != 0 || l.Stats().RoundTrips != 0 {
		t.Fatalf("%d keys, %d round trips after refused batches", n, l.Stats().RoundTrips)
	}
}
