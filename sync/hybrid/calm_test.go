package hybrid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestCalmShareKeepsCalmIdentitiesOutOfRedis: with CalmShare 0.5 (limit
// 10, margin 0.1, gossip on), units admitted while an identity's estimate
// stays at most 5 are gossiped but not sent by Sync; the unit that takes
// it past 5 queues it, and the next Sync sends every own count, the calm
// ones too; Flush sends a still-calm identity's units. Nothing of this
// changes with CalmShare 0. CalmShare without gossip, with Escrow or not
// below 1 − Margin is refused.
func TestCalmShareKeepsCalmIdentitiesOutOfRedis(t *testing.T) {
	ctx := context.Background()
	for _, calm := range []float64{0, 0.5} {
		e := newEnv(t, true)
		n := e.node("pa", func(c *Config) {
			c.Limit, c.Margin, c.CalmShare, c.Namespace = core.PerWindow(10, 10*time.Second), 0.1, calm, "el"
		})
		idx, _ := n.position(t0.UnixMilli())
		admit := func(key string, k int) {
			for range k {
				if d, err := n.AllowN(ctx, key, t0, 1); err != nil || !d.Allowed || d.Source != core.SourceLocal {
					t.Fatalf("calm %g, %s: %+v, %v", calm, key, d, err)
				}
			}
		}
		sync := func() {
			if err := n.Sync(ctx, t0); err != nil {
				t.Fatal(err)
			}
		}
		want := func(step string, key string, units int64) {
			if got := e.redisTotal("el", key, idx); got != units {
				t.Fatalf("calm %g, %s: Redis holds %d of %s, want %d", calm, step, got, key, units)
			}
		}
		kept := func(units int64) int64 { // what Redis holds of calm units: none with CalmShare
			if calm > 0 {
				return 0
			}
			return units
		}
		admit("k", 5) // estimate 5 after the fifth: calm
		admit("c", 2)
		sync()
		want("after 5 calm units", "k", kept(5))
		want("after 2 calm units", "c", kept(2))
		admit("k", 1) // estimate 6: past 5
		sync()
		want("once past the calm share", "k", 6)
		want("still calm", "c", kept(2))
		if err := n.Flush(ctx, t0); err != nil {
			t.Fatal(err)
		}
		want("after Flush", "c", 2)
	}
	for _, c := range []Config{
		{CalmShare: 0.5, Margin: 0.1},               // no NATS
		{CalmShare: 0.95, Margin: 0.1},              // not below 1 − Margin
		{CalmShare: 0.5, Margin: 0.1, Escrow: true}, // escrow
		{CalmShare: -0.1},                           // negative
	} {
		e := newEnv(t, c.CalmShare == 0.95 || c.Escrow)
		c.PoP, c.Limit, c.Redis = "pa", core.PerWindow(10, time.Second), e.rdb
		if e.nats != nil {
			c.NATS = e.nats.Connect(t)
		}
		if _, err := New(c); !errors.Is(err, ErrBadConfig) {
			t.Errorf("CalmShare %g, Margin %g, Escrow %v, NATS %v: %v, want ErrBadConfig", c.CalmShare, c.Margin, c.Escrow, c.NATS != nil, err)
		}
	}
}

// TestCalmShareOffWhileNATSDown: with the Node's NATS connection down,
// calm units go to Redis as without CalmShare (no other PoP would hear of
// them).
func TestCalmShareOffWhileNATSDown(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	n := e.node("pa", func(c *Config) {
		c.Limit, c.Margin, c.CalmShare = core.PerWindow(10, 10*time.Second), 0.1, 0.5
	})
	e.nats.Shutdown()
	waitFor(t, "the NATS connection to see the server stopped", func() bool { return !n.cfg.NATS.IsConnected() })
	for range 3 {
		if d, err := n.AllowN(ctx, "k", t0, 1); err != nil || !d.Allowed {
			t.Fatalf("%+v, %v", d, err)
		}
	}
	if err := n.Sync(ctx, t0); err != nil {
		t.Fatal(err)
	}
	idx, _ := n.position(t0.UnixMilli())
	if got := e.redisTotal("el", "k", idx); got != 3 {
		t.Fatalf("NATS down: Redis holds %d of 3 calm units, want 3", got)
	}
}

// TestCalmShareResendsWhatRedisHeld: an identity sent to Redis while past
// the calm share, calm again once its window has passed, is still in the
// periodic re-send (Redis may have lost what it held), while one never
// sent is not.
func TestCalmShareResendsWhatRedisHeld(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, true)
	n := e.node("pa", func(c *Config) {
		c.Limit, c.Margin, c.CalmShare, c.Resync = core.PerWindow(10, 10*time.Second), 0.1, 0.5, 5*time.Second
	})
	for _, k := range []struct {
		key   string
		units int
	}{{"hot", 6}, {"calm", 2}} {
		for range k.units {
			if d, err := n.AllowN(ctx, k.key, t0, 1); err != nil || !d.Allowed {
				t.Fatalf("%s: %+v, %v", k.key, d, err)
			}
		}
	}
	if err := n.Sync(ctx, t0); err != nil {
		t.Fatal(err)
	}
	idx, _ := n.position(t0.UnixMilli())
	if e.redisTotal("el", "hot", idx) != 6 || e.redisTotal("el", "calm", idx) != 0 {
		t.Fatalf("before the loss: Redis holds %d of hot, %d of calm; want 6, 0", e.redisTotal("el", "hot", idx), e.redisTotal("el", "calm", idx))
	}
	if err := e.rdb.FlushAll(ctx).Err(); err != nil { // Redis restarted empty, unseen
		t.Fatal(err)
	}
	later := t0.Add(12 * time.Second)          // next window, 2.5 s in: hot weighs 6 × 0.75 = 4.5, calm
	if err := n.Sync(ctx, later); err != nil { // the periodic re-send is due
		t.Fatal(err)
	}
	if got := e.redisTotal("el", "hot", idx); got != 6 {
		t.Fatalf("after the re-send: Redis holds %d of hot's 6 units", got)
	}
	if got := e.redisTotal("el", "calm", idx); got != 0 {
		t.Fatalf("after the re-send: Redis holds %d of calm's units, which were never sent", got)
	}
}
