package hybrid

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
)

// TestEvictedSyncedEntryKeepsOwnCounts: an identity evicted from the view's
// LRU after its hits were reconciled (so in no pending set) and then seen
// again keeps this PoP's own counts: one PoP alone never admits more than
// Max in a window, and Redis holds exactly what it admitted.
func TestEvictedSyncedEntryKeepsOwnCounts(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", func(c *Config) { c.Capacity = 2 })
	now := e.clock.Now()
	for i := 0; i < 60; i++ {
		mustAllow(t, a, "k", now)
	}
	mustSync(t, a, now)
	mustAllow(t, a, "x", now)
	mustAllow(t, a, "y", now) // evicts k: reconciled, not pending
	mustSync(t, a, now)
	admitted := int64(60)
	for i := 0; i < 100; i++ {
		if mustAllow(t, a, "k", now).Allowed {
			admitted++
		}
	}
	mustSync(t, a, now)
	if admitted != 100 {
		t.Fatalf("one PoP, limit 100: admitted %d in one window", admitted)
	}
	if got := e.redisTotal("el", "k", e.idx(a)); got != 100 {
		t.Fatalf("Redis holds %d of k, want the 100 admitted", got)
	}
	if c, _ := a.Counts("k", now); c != 100 {
		t.Fatalf("view holds %d of k, want 100", c)
	}
}

// TestGossipCapBoundsSybilSenders: the gossip cap bounds what gossip makes
// a PoP believe in total, over every sender: four invented sender ids each
// claiming GossipCap × Max leave the identity more than (1 − 2f) × Max of
// budget, as the package doc promises.
func TestGossipCapBoundsSybilSenders(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("v", func(c *Config) { c.GossipCap = 0.25 })
	now := e.clock.Now()
	idx := e.idx(n)
	for i := 0; i < 4; i++ {
		n.ApplyGossip(lie(fmt.Sprintf("liar#%d", i), idx, 25, "victim"), now)
	}
	admitted := 0
	for i := 0; i < 100; i++ {
		if mustAllow(t, n, "victim", now).Allowed {
			admitted++
		}
	}
	if admitted <= 50 {
		c, p := n.Counts("victim", now)
		t.Fatalf("GossipCap 0.25, 4 invented ids × 25: admitted %d of 100, want > 50 (view %d/%d)", admitted, c, p)
	}
}

// TestResetDeletesCurrentWindowsOfLaggingEntry: Reset of an identity whose
// cached entry lags behind the clock deletes the clock's current windows
// too (not only the entry's old ones), so this PoP's view and Redis both
// start again from zero.
func TestResetDeletesCurrentWindowsOfLaggingEntry(t *testing.T) {
	e := newEnv(t, false)
	a, b := e.node("a", nil), e.node("b", nil)
	mustAllow(t, a, "k", e.clock.Now())
	e.clock.Set(e.clock.Now().Add(25 * time.Second))
	now := e.clock.Now()
	for i := 0; i < 100; i++ {
		mustAllow(t, b, "k", now)
	}
	mustSync(t, b, now)
	if err := a.Reset(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if got := e.redisTotal("el", "k", e.idx(a)); got != 0 {
		t.Fatalf("after Reset Redis' current window still holds %d", got)
	}
	mustAllow(t, a, "k", now)
	mustSync(t, a, now)
	if c, _ := a.Counts("k", now); c != 1 {
		t.Fatalf("view after Reset, one admit and a Sync: %d, want 1", c)
	}
	if !mustAllow(t, a, "k", now).Allowed {
		t.Fatal("denied after Reset")
	}
}

// TestGossipAheadKeepsOwnAdmitsInTheirWindow: gossip from a sender whose
// clock is just past a window boundary rolls the receiver's entry one
// window ahead; the receiver's own admits, local or Redis-decided, are
// still counted (and reconciled) in the window they were made in.
func TestGossipAheadKeepsOwnAdmitsInTheirWindow(t *testing.T) {
	for _, margin := range []float64{0, 0.99} {
		t.Run(fmt.Sprint("margin", margin), func(t *testing.T) {
			e := newEnv(t, false)
			a := e.node("a", func(c *Config) { c.Margin = margin })
			base := time.UnixMilli((t0.UnixMilli()/10_000)*10_000 + 9_990)
			idx := base.UnixMilli() / 10_000
			for i := 0; i < 50; i++ {
				mustAllow(t, a, "k", base)
			}
			a.ApplyGossip(gossip.Message{PoP: "b#1", SentAt: base.Add(20 * time.Millisecond), WindowMillis: 10_000,
				Entries: []gossip.Entry{{Key: "k", Window: idx + 1, Count: 1}}}, base)
			for i := 0; i < 49; i++ {
				mustAllow(t, a, "k", base)
			}
			mustSync(t, a, base)
			if cur, next := e.redisTotal("el", "k", idx), e.redisTotal("el", "k", idx+1); cur != 99 || next != 0 {
				t.Fatalf("Redis holds %d in window idx and %d in idx+1; want all 99 admits in idx", cur, next)
			}
			// Two windows on only b's gossiped unit of idx+1 weighs.
			later := time.UnixMilli((idx+2)*10_000 + 1000)
			if est := a.Estimate("k", later); est > 1 {
				t.Fatalf("estimate %.1f at idx+2, want ≤ 1 (a's admits were all in idx)", est)
			}
		})
	}
}

// holdHook holds the reply of the next reconcile script call (EVAL/EVALSHA
// with one identity: 2 keys, id, ttl, 2 counts) after Redis ran it, until
// release is closed; reached is closed when it is held.
type holdHook struct {
	armed            atomic.Bool
	reached, release chan struct{}
}

func (h *holdHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h *holdHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		h.hold([]goredis.Cmder{cmd})
		return err
	}
}

// ProcessPipelineHook holds a Sync's batches too: Sync sends them in a
// pipeline (ExecAll).
func (h *holdHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		h.hold(cmds)
		return err
	}
}

// hold blocks, once armed, after a one-identity reconcile script ran.
func (h *holdHook) hold(cmds []goredis.Cmder) {
	for _, cmd := range cmds {
		if (cmd.Name() == "evalsha" || cmd.Name() == "eval") && len(cmd.Args()) == 9 && h.armed.CompareAndSwap(true, false) {
			close(h.reached)
			<-h.release
			return
		}
	}
}

// TestDecideDuringFlushIsNoFalseLoss: a Redis-decided reply for an
// identity merged between a reconcile's snapshot and its reply (so Redis
// ran the reconcile first) is no data loss: no full re-send follows.
func TestDecideDuringFlushIsNoFalseLoss(t *testing.T) {
	e := newEnv(t, false)
	h := &holdHook{reached: make(chan struct{}), release: make(chan struct{})}
	e.rdb.AddHook(h)
	a := e.node("a", func(c *Config) { c.Margin = 0.99 }) // every request decided at Redis
	now := e.clock.Now()
	mustAllow(t, a, "warm", now)
	mustSync(t, a, now) // loads reconcile.lua
	for i := 0; i < 3; i++ {
		mustAllow(t, a, "k", now)
	}
	before := a.Stats().Resends
	h.armed.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := a.Sync(context.Background(), now); err != nil {
			t.Errorf("Sync: %v", err)
		}
	}()
	<-h.reached               // the reconcile ran at Redis, its reply is held
	mustAllow(t, a, "k", now) // decided at Redis: its reply acks 4
	close(h.release)
	<-done
	mustSync(t, a, now)
	if got := a.Stats().Resends; got != before {
		t.Fatalf("Redis lost nothing, yet Resends went %d -> %d", before, got)
	}
}

// TestParkedEntriesRevivedBoundedAndSwept: an evicted identity holding own
// counts is parked and revived with them; at most MaxPending are parked
// (further ones counted in Stats.EvictedWithCounts); Sync drops parked
// identities once their windows are gone.
func TestParkedEntriesRevivedBoundedAndSwept(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", func(c *Config) { c.Capacity = 1; c.MaxPending = 2 })
	now := e.clock.Now()
	for i := 0; i < 5; i++ {
		mustAllow(t, a, "k1", now)
	}
	mustSync(t, a, now)
	mustAllow(t, a, "k2", now) // parks k1
	if s := a.Stats(); s.Parked != 1 || s.EvictedWithCounts != 0 {
		t.Fatalf("after evicting k1: %+v, want 1 parked", s)
	}
	mustAllow(t, a, "k1", now) // revives k1, parks k2
	if c, _ := a.Counts("k1", now); c != 6 {
		t.Fatalf("revived k1 counts %d, want 6", c)
	}
	mustSync(t, a, now)
	mustAllow(t, a, "k3", now) // parks k1: k2, k1 parked
	mustAllow(t, a, "k4", now) // k3 cannot be parked
	if s := a.Stats(); s.Parked != 2 || s.EvictedWithCounts != 1 {
		t.Fatalf("after evicting k1, k2, k3: %+v, want 2 parked, 1 lost", s)
	}
	if c, _ := a.Counts("k1", now); c != 6 {
		t.Fatalf("parked k1 counts %d, want 6", c)
	}
	mustSync(t, a, now)
	if s := a.Stats(); s.Parked != 2 {
		t.Fatalf("Sync dropped live parked entries: %+v", s)
	}
	later := now.Add(25 * time.Second) // two windows on
	mustSync(t, a, later)
	if s := a.Stats(); s.Parked != 0 {
		t.Fatalf("Sync two windows on kept %d parked entries", s.Parked)
	}
}

// TestPeekAndResetDoNotPark: Peek of an unknown identity creates no view
// entry (and evicts none); Reset removes an entry without parking it.
func TestPeekAndResetDoNotPark(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", func(c *Config) { c.Capacity = 1 })
	now := e.clock.Now()
	mustAllow(t, a, "k", now)
	for i := 0; i < 3; i++ {
		if d, err := a.Peek(context.Background(), fmt.Sprint("p", i), now); err != nil || !d.Allowed || d.Remaining != 100 {
			t.Fatalf("Peek of an unknown key: %+v, %v", d, err)
		}
	}
	if _, ok := a.cache.Peek("k"); !ok || a.cache.Len() != 1 || a.Stats().Parked != 0 {
		t.Fatalf("Peek changed the view: len %d, %+v", a.cache.Len(), a.Stats())
	}
	if d, _ := a.Peek(context.Background(), "k", now); d.Remaining != 99 {
		t.Fatalf("Peek of k: %+v, want 99 remaining", d)
	}
	if err := a.Reset(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if s := a.Stats(); s.Parked != 0 || s.EvictedWithCounts != 0 || a.cache.Len() != 0 {
		t.Fatalf("Reset parked its entry: %+v", s)
	}
	if c, _ := a.Counts("k", now); c != 0 {
		t.Fatalf("after Reset the view holds %d", c)
	}
}

// TestGossipDoesNotEvictOwnCounts: in a full view, gossip about an unknown
// identity is ignored (Stats.GossipSkipped) rather than evict an entry
// holding own counts; it is applied when the next victim holds none.
func TestGossipDoesNotEvictOwnCounts(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", func(c *Config) { c.Capacity = 1 })
	now := e.clock.Now()
	idx := e.idx(a)
	mustAllow(t, a, "mine", now)
	a.ApplyGossip(lie("b#1", idx, 5, "theirs"), now)
	if s := a.Stats(); s.GossipSkipped != 2 || s.Parked != 0 {
		t.Fatalf("gossip about an unknown key in a full view: %+v, want 2 skipped", s)
	}
	if _, ok := a.cache.Peek("mine"); !ok {
		t.Fatal("gossip evicted an entry holding own counts")
	}
	b := e.node("b", func(c *Config) { c.Capacity = 1 })
	b.ApplyGossip(lie("c#1", idx, 5, "x"), now)
	b.ApplyGossip(lie("c#1", idx, 7, "y"), now) // x holds no own counts
	if c, p := b.Counts("y", now); c != 7 || p != 7 || b.Stats().GossipSkipped != 0 {
		t.Fatalf("gossip into a view whose victim holds no own counts: y %d/%d, %+v", c, p, b.Stats())
	}
}

// TestGossipPeersBounded: a view tracks at most MaxPeers other counters of
// an identity; gossip from further ids is ignored and counted, and a
// counter Redis reports takes the place of one known only by gossip.
func TestGossipPeersBounded(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("v", nil)
	now := e.clock.Now()
	idx := e.idx(n)
	for i := 0; i < MaxPeers+6; i++ {
		n.ApplyGossip(gossip.Message{PoP: fmt.Sprintf("liar#%d", i), SentAt: now, WindowMillis: 10_000,
			Entries: []gossip.Entry{{Key: "k", Window: idx, Count: 1}}}, now)
	}
	if c, _ := n.Counts("k", now); c != MaxPeers {
		t.Fatalf("view of k %d, want one unit from each of %d peers", c, MaxPeers)
	}
	if got := n.Stats().PeersDropped; got != 6 {
		t.Fatalf("PeersDropped %d, want 6", got)
	}
	real := reconcile.New(e.rdb, "el", "real#1", n.cfg.Limit.Window)
	if _, err := real.Flush(context.Background(), []reconcile.Item{{Key: "k", Index: idx, Own: [2]int64{5, 0}}}); err != nil {
		t.Fatal(err)
	}
	mustAllow(t, n, "k", now)
	mustSync(t, n, now)
	if c, _ := n.Counts("k", now); c != 1+(MaxPeers-1)+5 {
		t.Fatalf("view of k %d, want own 1 + %d gossiped + Redis' 5", c, MaxPeers-1)
	}
	if got := n.Stats().PeersDropped; got != 6 {
		t.Fatalf("PeersDropped %d after a Redis-reported counter, want still 6", got)
	}
}

// TestGossipBudgetFreedByRedis: the gossip budget is spent by claims above
// Redis' reports; once Redis confirms a sender's units, another sender's
// clamped claim counts.
func TestGossipBudgetFreedByRedis(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("v", func(c *Config) { c.GossipCap = 0.25 })
	now := e.clock.Now()
	idx := e.idx(n)
	gossipCur := func(pop string, v int64) {
		n.ApplyGossip(gossip.Message{PoP: pop, SentAt: now, WindowMillis: 10_000,
			Entries: []gossip.Entry{{Key: "k", Window: idx, Count: v}}}, now)
	}
	gossipCur("b#1", 20)
	gossipCur("c#1", 20)
	if c, _ := n.Counts("k", now); c != 25 || n.Stats().GossipClamped != 1 {
		t.Fatalf("view %d (clamped %d), want 25: budget of 25 over both senders", c, n.Stats().GossipClamped)
	}
	b := reconcile.New(e.rdb, "el", "b#1", n.cfg.Limit.Window)
	if _, err := b.Flush(context.Background(), []reconcile.Item{{Key: "k", Index: idx, Own: [2]int64{20, 0}}}); err != nil {
		t.Fatal(err)
	}
	mustAllow(t, n, "k", now)
	mustSync(t, n, now)
	if c, _ := n.Counts("k", now); c != 1+20+20 {
		t.Fatalf("view %d, want own 1 + b's 20 (Redis) + c's 20 (gossip, within budget now)", c)
	}
}

// TestExpirySlackLengthensTTL: Config.ExpirySlack is added to the TTL of
// every hash the Node writes; a negative one is refused.
func TestExpirySlackLengthensTTL(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", func(c *Config) { c.ExpirySlack = time.Hour })
	b := e.node("b", func(c *Config) { c.ExpirySlack = time.Hour; c.Margin = 0.999; c.Namespace = "dec" })
	now := e.clock.Now()
	mustAllow(t, a, "k", now)
	mustSync(t, a, now)
	if d := mustAllow(t, b, "k", now); d.Source != core.SourceRedis {
		t.Fatalf("decided by %v, want Redis", d.Source)
	}
	for _, ns := range []string{"el", "dec"} {
		ttl := e.rdb.PTTL(context.Background(), reconcile.Key(ns, "k", e.idx(a))).Val()
		if ttl <= time.Hour || ttl > time.Hour+20*time.Second {
			t.Fatalf("%s: TTL %v, want an hour plus two windows", ns, ttl)
		}
	}
	if _, err := New(Config{PoP: "x", Limit: a.cfg.Limit, Redis: e.rdb, ExpirySlack: -1}); err == nil {
		t.Fatal("negative ExpirySlack accepted")
	}
}

// TestEvictionChurnKeepsOwnCounts: many callers on four times more
// identities than the view holds, with Syncs running alongside: one PoP
// admits exactly Max of each identity in a window, and after a last Sync
// Redis holds exactly what it admitted (MaxPending leaves room to park
// every identity).
func TestEvictionChurnKeepsOwnCounts(t *testing.T) {
	e := newEnv(t, false)
	a := e.node("a", func(c *Config) { c.Capacity = 3; c.MaxPending = 64; c.Limit.Max = 40 })
	now := e.clock.Now()
	const keys, callers, calls = 12, 8, 300
	var admitted [keys]atomic.Int64
	stop := make(chan struct{})
	syncDone := make(chan struct{})
	go func() {
		defer close(syncDone)
		for {
			select {
			case <-stop:
				return
			default:
				_ = a.Sync(context.Background(), now)
			}
		}
	}()
	done := make(chan struct{})
	for c := 0; c < callers; c++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < calls; i++ {
				k := (c*7 + i*5) % keys
				d, err := a.AllowN(context.Background(), fmt.Sprint("k", k), now, 1)
				if err != nil {
					t.Errorf("AllowN: %v", err)
					return
				}
				if d.Allowed {
					admitted[k].Add(1)
				}
			}
		}()
	}
	for c := 0; c < callers; c++ {
		<-done
	}
	close(stop)
	<-syncDone
	mustSync(t, a, now)
	for k := range admitted {
		got, redis := admitted[k].Load(), e.redisTotal("el", fmt.Sprint("k", k), e.idx(a))
		if got != 40 || redis != got {
			t.Errorf("k%d: admitted %d, Redis holds %d; want 40 and 40 (%+v)", k, got, redis, a.Stats())
		}
	}
}
