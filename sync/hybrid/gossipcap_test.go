package hybrid

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// lie is a gossip message from liar claiming count for every key in both
// live windows at idx.
func lie(liar string, idx int64, count int64, keys ...string) gossip.Message {
	m := gossip.Message{PoP: liar, SentAt: t0, WindowMillis: 10_000}
	for _, k := range keys {
		m.Entries = append(m.Entries, gossip.Entry{Key: k, Window: idx, Count: count},
			gossip.Entry{Key: k, Window: idx - 1, Count: count})
	}
	return m
}

// TestGossipCapClampsLies: with the default cap a peer's gossiped count of
// an identity in a window counts for at most Limit.Max above what Redis
// reported for that peer; an honest count (≤ Max) is never clamped; the
// excess is counted in Stats.GossipClamped; the cap follows the peer's
// Redis field; and gossip never reaches Redis, even through a Redis-decided
// request of the PoP that heard it.
func TestGossipCapClampsLies(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Margin = 0.5 })
	now := e.clock.Now()
	idx := e.idx(n)
	n.ApplyGossip(lie("honest#1", idx, 100, "k1"), now)
	if s := n.Stats(); s.GossipClamped != 0 {
		t.Fatalf("an honest count of Max was clamped: %+v", s)
	}
	if c, p := n.Counts("k1", now); c != 100 || p != 100 {
		t.Fatalf("honest counts %d/%d, want 100/100", c, p)
	}
	n.ApplyGossip(lie("liar#1", idx, 1<<40, "k2"), now)
	n.ApplyGossip(lie("liar#1", idx, math.MaxInt64, "k2"), now)
	if c, p := n.Counts("k2", now); c != 100 || p != 100 {
		t.Fatalf("lying counts %d/%d, want clamped to 100/100", c, p)
	}
	if got := n.Stats().GossipClamped; got != 4 {
		t.Fatalf("GossipClamped %d, want 4 (2 messages × 2 windows)", got)
	}

	// The cap is relative to what Redis reports for the sender: once its
	// real field says 30, it may claim up to 130.
	real := reconcile.New(e.rdb, "el", "liar#1", n.cfg.Limit.Window)
	if _, err := real.Flush(context.Background(), []reconcile.Item{{Key: "k3", Index: idx, Own: [2]int64{30, 0}}}); err != nil {
		t.Fatal(err)
	}
	mustAllow(t, n, "k3", now)
	mustSync(t, n, now)
	n.ApplyGossip(gossip.Message{PoP: "liar#1", SentAt: now, WindowMillis: 10_000,
		Entries: []gossip.Entry{{Key: "k3", Window: idx, Count: 1000}}}, now)
	if c, _ := n.Counts("k3", now); c != 1+130 {
		t.Fatalf("k3 view %d, want own 1 + liar's 30 + cap 100", c)
	}

	// A Redis-decided request weighs the lie but does not write it.
	n.ApplyGossip(gossip.Message{PoP: "liar#1", SentAt: now, WindowMillis: 10_000,
		Entries: []gossip.Entry{{Key: "k4", Window: idx, Count: 60}}}, now)
	d := mustAllow(t, n, "k4", now)
	if d.Source != core.SourceRedis || !d.Allowed || d.Remaining != 100-61 {
		t.Fatalf("k4: %+v, want a Redis decision counting the liar's 60", d)
	}
	f, err := e.rdb.HGetAll(context.Background(), reconcile.Key("el", "k4", idx)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f["liar#1"]; ok || len(f) != 1 {
		t.Fatalf("Redis holds %v: gossip reached Redis", f)
	}
}

// TestGossipCapKeepsBudget: one PoP gossips absurd counts for 50 identities
// in both live windows. With GossipCap 1 (default) the victim PoP denies
// them all at once; with GossipCap 0.25 each identity still gets more than
// (1 − 2×0.25) × Max of its budget at the victim, through local and
// Redis-decided requests, and the lie is never written to Redis.
func TestGossipCapKeepsBudget(t *testing.T) {
	e := newEnv(t, false)
	keys := make([]string, 50)
	for i := range keys {
		keys[i] = fmt.Sprint("victim", i)
	}
	for _, f := range []float64{1, 0.25} {
		n := e.node(fmt.Sprint("f", f), func(c *Config) { c.Margin = 0.2; c.GossipCap = f; c.Namespace = fmt.Sprint("f", f*100) })
		now := e.clock.Now()
		idx := e.idx(n)
		n.ApplyGossip(lie("liar#1", idx, gossip.MaxCount, keys...), now)
		if got := n.Stats().GossipClamped; got != 100 {
			t.Fatalf("GossipCap %v: GossipClamped %d, want 100", f, got)
		}
		minAdmitted := int64(math.MaxInt64)
		for _, k := range keys {
			var admitted int64
			for i := 0; i < 120; i++ {
				d, err := n.AllowN(context.Background(), k, now, 1)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					admitted++
				}
			}
			minAdmitted = min(minAdmitted, admitted)
		}
		mustSync(t, n, now)
		t.Logf("GossipCap %v: a lying PoP leaves each of 50 identities at least %d of 100 per window (%+v)",
			f, minAdmitted, n.Stats())
		switch f {
		case 1:
			if minAdmitted != 0 {
				t.Fatalf("GossipCap 1: admitted %d under a lie of Max, want 0 (denied)", minAdmitted)
			}
		default:
			if floor := int64((1 - 2*f) * 100); minAdmitted <= floor {
				t.Fatalf("GossipCap %v: only %d admitted, want more than %d", f, minAdmitted, floor)
			}
			for _, k := range keys {
				if got := e.redisTotal(n.cfg.Namespace, k, idx); got > 100 {
					t.Fatalf("%s: Redis holds %d > Max", k, got)
				}
				m, _ := e.rdb.HGetAll(context.Background(), reconcile.Key(n.cfg.Namespace, k, idx)).Result()
				if _, ok := m["liar#1"]; ok {
					t.Fatalf("%s: the lie reached Redis: %v", k, m)
				}
			}
		}
	}
}

func TestGossipCapValidated(t *testing.T) {
	e := newEnv(t, false)
	for _, f := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
		_, err := New(Config{PoP: "a", Limit: core.PerWindow(10, 10_000_000_000), Redis: e.rdb, GossipCap: f})
		if !errors.Is(err, ErrBadConfig) || !errors.Is(err, core.ErrInvalid) {
			t.Errorf("GossipCap %v: err %v, want ErrBadConfig", f, err)
		}
	}
}
