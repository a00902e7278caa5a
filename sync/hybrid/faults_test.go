package hybrid

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
)

// TestRedisKilledMidRun: Redis dies (SIGKILL) and comes back empty; the
// PoPs keep deciding, then re-send their cumulative counts so Redis ends
// holding every admitted hit of the live windows.
func TestRedisKilledMidRun(t *testing.T) {
	e := newEnv(t, false)
	mod := func(c *Config) { c.Margin = 0.1; c.MaxPending = 1000 }
	nodes := []*Node{e.node("a", mod), e.node("b", mod), e.node("c", mod)}
	admitted := map[string]int64{}
	hit := func(round int) {
		now := e.clock.Now()
		for i, n := range nodes {
			for k := 0; k < 6; k++ {
				key := fmt.Sprint("id", k)
				d, err := n.AllowN(context.Background(), key, now, 1)
				if err != nil && !errors.Is(err, core.ErrUnavailable) {
					t.Fatalf("round %d node %d: %v", round, i, err)
				}
				if d.Allowed {
					admitted[key]++
				}
			}
			n.Sync(context.Background(), now)
		}
	}
	for r := 0; r < 5; r++ {
		hit(r)
	}
	if err := e.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	for r := 5; r < 10; r++ {
		hit(r)
	}
	for _, n := range nodes {
		if n.Stats().RedisErrors == 0 {
			t.Fatalf("%s saw no Redis error while it was down", n.ID())
		}
	}
	if err := e.proc.Restart(); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Second) // past RedisRetry
	for r := 10; r < 12; r++ {
		hit(r)
	}
	// go-redis' pool keeps reporting the last dial error for up to a second
	// after Redis is back; a later Sync succeeds.
	waitFor(t, "Sync after restart", func() bool {
		ok := true
		for _, n := range nodes {
			ok = n.Sync(context.Background(), e.clock.Now()) == nil && ok
		}
		return ok
	})
	for key, want := range admitted {
		if got := e.redisTotal("el", key, e.idx(nodes[0])); got != want {
			t.Fatalf("after restart Redis %s = %d, want %d", key, got, want)
		}
	}
}

// TestRedisRestartUnseenIsHealed: Redis restarts empty between two Syncs
// (no error seen); the loss is detected from the reply of the next flush
// and everything is re-sent.
func TestRedisRestartUnseenIsHealed(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	now := e.clock.Now()
	for k := 0; k < 5; k++ {
		mustAllow(t, n, fmt.Sprint("id", k), now)
	}
	mustSync(t, n, now)
	e.rdb.FlushAll(context.Background())
	mustAllow(t, n, "id0", now)
	mustSync(t, n, now) // detects the loss
	mustSync(t, n, now) // re-sends everything
	for k := 0; k < 5; k++ {
		want := int64(1)
		if k == 0 {
			want = 2
		}
		if got := e.redisTotal("el", fmt.Sprint("id", k), e.idx(n)); got != want {
			t.Fatalf("id%d: Redis %d, want %d", k, got, want)
		}
	}
}

func TestMaxPendingBoundsAndCounts(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.MaxPending = 3 })
	e.proc.Kill()
	for k := 0; k < 5; k++ {
		mustAllow(t, n, fmt.Sprint("id", k), e.clock.Now())
	}
	if n.Sync(context.Background(), e.clock.Now()) == nil {
		t.Fatal("Sync with Redis down returned nil")
	}
	if got := n.Stats().PendingDropped; got != 2 {
		t.Fatalf("PendingDropped %d, want 2", got)
	}
}

// TestNATSRestartedMidRun: NATS goes away and comes back; no panic,
// gossip resumes, nothing double counted.
func TestNATSRestartedMidRun(t *testing.T) {
	e := newEnv(t, true)
	a, b := e.node("a", nil), e.node("b", nil)
	now := e.clock.Now()
	for i := 0; i < 10; i++ {
		mustAllow(t, a, "k", now)
	}
	a.Gossip(now)
	waitFor(t, "first gossip", func() bool { c, _ := b.Counts("k", now); return c == 10 })
	e.nats.Shutdown()
	for i := 0; i < 10; i++ {
		mustAllow(t, a, "k", now)
		a.Gossip(now) // buffered or failed; must not block or panic
	}
	e.nats.Restart()
	waitFor(t, "reconnect", func() bool { return a.cfg.NATS.IsConnected() && b.cfg.NATS.IsConnected() })
	// A reconnected client sends its subscriptions again, then its
	// buffered messages; a round trip on each connection proves the server
	// has b's subscription before a's next gossip, which is published once
	// (under load it could otherwise reach the server first and be lost).
	for _, n := range []*Node{a, b} {
		if err := n.cfg.NATS.Flush(); err != nil {
			t.Fatalf("flush after reconnect: %v", err)
		}
	}
	for i := 0; i < 5; i++ {
		mustAllow(t, a, "k", now)
	}
	waitFor(t, "gossip after restart", func() bool {
		a.Gossip(now)
		c, _ := b.Counts("k", now)
		return c == 25
	})
	mustSync(t, a, now)
	mustAllow(t, b, "k", now)
	mustSync(t, b, now)
	if c, _ := b.Counts("k", now); c != 26 {
		t.Fatalf("b's view %d after reconcile, want 26", c)
	}
	if got := e.redisTotal("el", "k", e.idx(a)); got != 26 {
		t.Fatalf("Redis %d, want 26", got)
	}
}

func TestMalformedGossipDropped(t *testing.T) {
	e := newEnv(t, true)
	n := e.node("a", nil)
	nc := e.nats.Connect(t)
	subj := gossip.Subject("el")
	good, _ := gossip.Marshal(gossip.Message{PoP: "x#1", SentAt: e.clock.Now(), WindowMillis: 10000,
		Entries: []gossip.Entry{{Key: "k", Window: e.idx(n), Count: 3}}})
	otherWindow, _ := gossip.Marshal(gossip.Message{PoP: "x#1", SentAt: e.clock.Now(), WindowMillis: 999,
		Entries: []gossip.Entry{{Key: "k", Window: e.idx(n), Count: 50}}})
	bad := [][]byte{
		{}, {0xE1}, {0xE1, 7, 1, 'p'}, good[:len(good)-1], append(append([]byte{}, good...), 0),
		make([]byte, gossip.MaxMessageBytes+1), otherWindow,
	}
	for _, p := range bad {
		if err := nc.Publish(subj, p); err != nil {
			t.Fatal(err)
		}
	}
	nc.Publish(subj, good)
	flushNATS(t, nc)
	waitFor(t, "all received", func() bool {
		s := n.Stats()
		return s.GossipDropped+s.GossipReceived >= uint64(len(bad)+1)
	})
	s := n.Stats()
	if s.GossipDropped != uint64(len(bad)) || s.GossipReceived != 1 {
		t.Fatalf("dropped %d received %d, want %d and 1", s.GossipDropped, s.GossipReceived, len(bad))
	}
	if c, _ := n.Counts("k", e.clock.Now()); c != 3 {
		t.Fatalf("view %d, want only the good message's 3", c)
	}
}

func TestCloseFlushes(t *testing.T) {
	e := newEnv(t, true)
	a, b := e.node("a", nil), e.node("b", nil)
	a.Start(time.Hour, time.Hour)
	now := e.clock.Now()
	for i := 0; i < 7; i++ {
		mustAllow(t, a, "k", now)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got := e.redisTotal("el", "k", e.idx(a)); got != 7 {
		t.Fatalf("Redis %d after Close, want 7", got)
	}
	waitFor(t, "final gossip", func() bool { c, _ := b.Counts("k", now); return c == 7 })
}

func TestBackgroundLoops(t *testing.T) {
	e := newEnv(t, true)
	mod := func(c *Config) { c.Clock = core.SystemClock{} }
	a, b := e.node("a", mod), e.node("b", mod)
	a.Start(10*time.Millisecond, 5*time.Millisecond)
	for i := 0; i < 4; i++ {
		if _, err := a.Allow(context.Background(), "k"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "loops", func() bool {
		c, _ := b.Counts("k", time.Now())
		return c == 4 && a.Stats().RedisRoundTrips > 0
	})
}
