package hybrid

import (
	"testing"
	"time"
)

// TestStartZeroUsesDefaults: Start(0, 0) runs both loops at their 100 ms
// defaults: each hit reaches Redis, and is gossiped, well within a second.
// Before the defaults, 0 turned both loops off and nothing ever left.
func TestStartZeroUsesDefaults(t *testing.T) {
	e := newEnv(t, true)
	n := e.node("a", nil)
	n.Start(0, 0)
	now := e.clock.Now()
	for i := int64(1); i <= 3; i++ {
		mustAllow(t, n, "k", now)
		start := time.Now()
		for e.redisTotal(DefaultNamespace, "k", e.idx(n)) < i {
			if time.Since(start) > time.Second {
				t.Fatalf("hit %d not in Redis after 1s with Start(0, 0) (default sync every %s)", i, DefaultSyncInterval)
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Logf("hit %d in Redis after %s", i, time.Since(start).Round(time.Millisecond))
	}
	start := time.Now()
	for n.Stats().GossipSent == 0 {
		if time.Since(start) > time.Second {
			t.Fatalf("nothing gossiped after 1s with Start(0, 0) (default gossip every %s)", DefaultGossipInterval)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStartLoopOff: a negative interval leaves that loop off: hits stay
// pending and nothing is gossiped, for four default intervals; the other
// loop, started, runs.
func TestStartLoopOff(t *testing.T) {
	e := newEnv(t, true)
	off := e.node("off", nil)
	half := e.node("half", nil)
	now := e.clock.Now()
	mustAllow(t, off, "k", now)
	mustAllow(t, half, "j", now)
	off.Start(LoopOff, -time.Second)
	half.Start(LoopOff, 10*time.Millisecond)
	time.Sleep(4 * DefaultSyncInterval)
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
