package hybrid

import (
	"slices"
	"testing"
	"time"
)

// TestStartZeroUsesDefaults: Start(0, 0) runs both loops at their 100 ms
// defaults: each Sync tick carries the hit to Redis, and a Gossip tick
// gossips it. Before the defaults, 0 turned both loops off and nothing ever
// left. The loops are ticked by hand (handTicks): the test waits on their
// effects, never on the wall clock.
func TestStartZeroUsesDefaults(t *testing.T) {
	e := newEnv(t, true)
	n := e.node("a", nil)
	var h handTicks
	h.install(n)
	n.Start(0, 0)
	if got := h.started(); !slices.Equal(got, []time.Duration{DefaultSyncInterval, DefaultGossipInterval}) {
		t.Fatalf("Start(0, 0) started tickers of %v; want Sync every %s, Gossip every %s", got, DefaultSyncInterval, DefaultGossipInterval)
	}
	now := e.clock.Now()
	for i := int64(1); i <= 3; i++ {
		mustAllow(t, n, "k", now)
		h.tick(0)
		h.tick(0) // taken once the Sync of the first tick is over
		if got := e.redisTotal(DefaultNamespace, "k", e.idx(n)); got != i {
			t.Fatalf("after the Sync loop ran with hit %d admitted, Redis holds %d", i, got)
		}
	}
	h.tick(1)
	h.tick(1) // the first Gossip is over
	if n.Stats().GossipSent == 0 {
		t.Fatal("nothing gossiped after the Gossip loop ran with hits admitted")
	}
}

// TestStartLoopOff: a negative interval leaves that loop off (no ticker is
// even asked for): hits stay pending and nothing is gossiped; the other
// loop, started, runs.
func TestStartLoopOff(t *testing.T) {
	e := newEnv(t, true)
	off := e.node("off", nil)
	half := e.node("half", nil)
	var hoff, hhalf handTicks
	hoff.install(off)
	hhalf.install(half)
	now := e.clock.Now()
	mustAllow(t, off, "k", now)
	mustAllow(t, half, "j", now)
	off.Start(LoopOff, -time.Second)
	half.Start(LoopOff, 10*time.Millisecond)
	if got := hoff.started(); len(got) != 0 {
		t.Errorf("both loops off: tickers of %v started; want none", got)
	}
	if got := hhalf.started(); !slices.Equal(got, []time.Duration{10 * time.Millisecond}) {
		t.Fatalf("sync off, gossip every 10ms: tickers of %v started; want only [10ms]", got)
	}
	hhalf.tick(0)
	hhalf.tick(0) // the first Gossip is over
	if s := off.Stats(); s.RedisRoundTrips != 0 || s.GossipSent != 0 || s.PendingRedis != 1 {
		t.Errorf("both loops off: round trips %d, gossip sent %d, pending %d; want 0, 0, 1",
			s.RedisRoundTrips, s.GossipSent, s.PendingRedis)
	}
	if s := half.Stats(); s.RedisRoundTrips != 0 || s.GossipSent == 0 {
		t.Errorf("sync off, gossip on: round trips %d, gossip sent %d; want 0, > 0", s.RedisRoundTrips, s.GossipSent)
	}
}

func TestLoopInterval(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, DefaultSyncInterval}, {time.Millisecond, time.Millisecond}, {LoopOff, LoopOff}, {-time.Hour, -time.Hour},
	} {
		if got := loopInterval(c.in, DefaultSyncInterval); got != c.want {
			t.Errorf("loopInterval(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
