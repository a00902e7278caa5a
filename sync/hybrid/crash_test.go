package hybrid

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
)

// TestScriptFlushMidRunHybrid: Redis forgets its scripts (SCRIPT FLUSH)
// every few dozen decisions while three PoPs decide (locally and at Redis) and
// reconcile concurrently: no decision and no Sync fails, and after the run
// Redis holds exactly every admitted hit.
func TestScriptFlushMidRunHybrid(t *testing.T) {
	e := newEnv(t, false)
	mod := func(c *Config) { c.Margin = 0.3; c.Limit = core.PerWindow(50, 10*time.Second) }
	nodes := []*Node{e.node("a", mod), e.node("b", mod), e.node("c", mod)}
	now := e.clock.Now()
	// Each PoP's caller flushes the scripts every 40 of its decisions, while
	// the other two decide and Sync: flushes land mid-run by count, not by
	// a timer that a loaded machine may starve.
	var flushes atomic.Int64
	var admitted [8]atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 400; r++ {
				k := (r + i) % len(admitted)
				d, err := n.AllowN(context.Background(), fmt.Sprint("id", k), now, 1)
				if err != nil {
					errs <- fmt.Errorf("%s decision %d: %w", n.ID(), r, err)
					return
				}
				if d.Allowed {
					admitted[k].Add(1)
				}
				if r%40 == 20 {
					if err := e.rdb.ScriptFlush(context.Background()).Err(); err != nil {
						errs <- fmt.Errorf("SCRIPT FLUSH: %w", err)
						return
					}
					flushes.Add(1)
				}
				if r%25 == 0 {
					if err := n.Sync(context.Background(), now); err != nil {
						errs <- fmt.Errorf("%s Sync: %w", n.ID(), err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var redisDecisions uint64
	for _, n := range nodes {
		mustSync(t, n, now)
		s := n.Stats()
		if s.RedisErrors != 0 || s.FallbackLocal != 0 {
			t.Fatalf("%s: %+v", n.ID(), s)
		}
		redisDecisions += s.RedisDecisions
	}
	if redisDecisions == 0 || flushes.Load() < 3 {
		t.Fatalf("%d Redis decisions under %d SCRIPT FLUSH: the run did not exercise reloads", redisDecisions, flushes.Load())
	}
	for k := range admitted {
		key := fmt.Sprint("id", k)
		if got, want := e.redisTotal("el", key, e.idx(nodes[0])), admitted[k].Load(); got != want {
			t.Fatalf("%s: Redis %d, want %d", key, got, want)
		}
	}
	t.Logf("%d SCRIPT FLUSH during the run, %d Redis decisions, no failure", flushes.Load(), redisDecisions)
}

// ownInRedis is the sum of field id over both live windows of keys.
func ownInRedis(t *testing.T, rdb goredis.UniversalClient, id string, idx int64, keys []string) int64 {
	t.Helper()
	var s int64
	for _, k := range keys {
		for _, w := range []int64{idx, idx - 1} {
			v, err := rdb.HGet(context.Background(), reconcile.Key("el", k, w), id).Result()
			if err != nil && !errors.Is(err, goredis.Nil) {
				t.Fatal(err)
			}
			c, _ := strconv.ParseInt(v, 10, 64)
			s += c
		}
	}
	return s
}

// TestCrashLosesOnlyUnflushed: a PoP that dies without Close (never
// flushed again) loses from Redis exactly the hits it admitted since its
// last successful Sync; those it gossiped before dying still weigh in the
// peers' views until their windows end. A replacement process (new
// incarnation) goes on from what Redis holds.
func TestCrashLosesOnlyUnflushed(t *testing.T) {
	e := newEnv(t, true)
	b := e.node("b", nil)
	a, err := New(Config{PoP: "a", Limit: core.PerWindow(1000, 10*time.Second), Redis: e.rdb,
		Clock: e.clock, Resync: -1, NATS: e.nats.Connect(t)}) // never closed: it crashes
	if err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now()
	keys := []string{"k0", "k1", "k2", "k3", "k4"}
	admit := func(per int) {
		for _, k := range keys {
			for i := 0; i < per; i++ {
				mustAllow(t, a, k, now)
			}
		}
	}
	admit(10) // 50 hits
	mustSync(t, a, now)
	admit(4) // 20 hits, gossiped but not synced
	if err := a.Gossip(now); err != nil {
		t.Fatal(err)
	}
	flushNATS(t, a.cfg.NATS)
	admit(1)           // 5 hits, neither synced nor gossiped
	a.cfg.NATS.Close() // the crash: a is dropped without Close
	const admitted, unsynced, ungossiped = 75, 25, 5
	waitFor(t, "b hears a's gossip", func() bool { c, _ := b.Counts("k0", now); return c == 14 })
	mustSync(t, b, now)
	idx := e.idx(b)
	inRedis := ownInRedis(t, e.rdb, a.ID(), idx, keys)
	var inView int64
	for _, k := range keys {
		c, _ := b.Counts(k, now)
		inView += c
	}
	t.Logf("crash: a admitted %d, synced %d; Redis lost %d (all unsynced), b's view lost %d (never gossiped)",
		admitted, admitted-unsynced, admitted-inRedis, admitted-inView)
	if inRedis != admitted-unsynced {
		t.Fatalf("Redis holds %d of a's hits, want %d (lost exactly the %d unsynced)", inRedis, admitted-unsynced, unsynced)
	}
	if inView != admitted-ungossiped {
		t.Fatalf("b's view holds %d, want %d", inView, admitted-ungossiped)
	}
	// The replacement counts from Redis' 50 plus gossip b passes on (none:
	// gossip carries only a PoP's own counts).
	a2 := e.node("a", nil)
	mustAllow(t, a2, "k0", now)
	mustSync(t, a2, now)
	if c, _ := a2.Counts("k0", now); c != 11 {
		t.Fatalf("replacement sees %d for k0, want 10 synced by the dead one + 1", c)
	}
}

// TestCrashLossBoundWithLoops measures the loss of a PoP running Start's
// loops that crashes mid-traffic: its Redis and NATS connections die at
// once and it never flushes. The Sync loop is ticked by hand (handTicks)
// between rounds of hits, and runs while the next round is decided; a tick
// is taken only once the loop's previous Sync is over. So every hit
// admitted before the second-to-last tick was taken is in a Sync that
// completed: the hits Redis lacks are at most those admitted after it,
// about two rounds (sync intervals) of traffic.
func TestCrashLossBoundWithLoops(t *testing.T) {
	e := newEnv(t, true)
	const rounds, perRound = 8, 50
	rdb := goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, MaxRetries: -1})
	a, err := New(Config{PoP: "a", Limit: core.PerWindow(1<<40, time.Hour), Redis: rdb,
		Resync: -1, NATS: e.nats.Connect(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) }) // stops its loops; flushes nothing (dead links)
	var h handTicks
	h.install(a)
	a.Start(50*time.Millisecond, 10*time.Millisecond)
	keys := make([]string, 20)
	for i := range keys {
		keys[i] = fmt.Sprint("u", i)
	}
	hits := 0
	var before []int // hits admitted before each tick was taken
	for range rounds {
		for range perRound {
			if _, err := a.Allow(context.Background(), keys[hits%len(keys)]); err != nil {
				t.Fatal(err)
			}
			hits++
		}
		h.tick(0)
		before = append(before, hits)
	}
	for range perRound { // the last round, its Sync never made
		if _, err := a.Allow(context.Background(), keys[hits%len(keys)]); err != nil {
			t.Fatal(err)
		}
		hits++
	}
	crash := a.cfg.Clock.Now()
	rdb.Close()
	a.cfg.NATS.Close()
	idx := core.Millis(crash) / time.Hour.Milliseconds()
	inRedis := ownInRedis(t, e.rdb, a.ID(), idx, keys)
	lost := int64(hits) - inRedis
	bound := int64(hits - before[len(before)-2])
	t.Logf("crash after %d hits in %d rounds of %d: Redis lost %d (at most %d: those admitted after the second-to-last Sync began)",
		hits, rounds+1, perRound, lost, bound)
	if lost < 0 {
		t.Fatalf("Redis holds %d, more than the %d admitted", inRedis, hits)
	}
	if lost > bound {
		t.Fatalf("lost %d hits, more than the %d admitted after the second-to-last Sync began", lost, bound)
	}
}
