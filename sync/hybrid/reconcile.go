package hybrid

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// Sync runs one reconciliation at now: every identity with hits not yet in
// Redis goes to Redis in batches of at most BatchSize, one round trip each,
// and each reply refreshes that identity's view with every PoP's counts. On
// a Redis Cluster the identities are first grouped by the master serving
// them, so each batch is one round trip to one node (a Sync with at most
// BatchSize identities per master costs at most one round trip per master);
// the masters' groups are sent concurrently, so a master that fails or
// hangs neither stops nor delays the others. Between two batches to one
// node Sync pauses (see Config.SyncShare) so that a large Sync leaves that
// node time for its other clients. After a Redis failure, a detected data
// loss (a Redis restarted empty) or every Resync, all identities with own
// counts in live windows are re-sent. On failure it returns a
// *core.UnavailableError; the unsent identities stay pending (bounded by
// MaxPending) and are re-sent by the next Sync.
func (n *Node) Sync(ctx context.Context, now time.Time) error {
	return n.sync(ctx, now, true)
}

// sync is Sync, pausing between batches to one node only when paced (Close
// flushes without pauses). When an identity is now served by another Redis
// Cluster master than the one its last Sync went to (a replica promoted
// after a failover this Node never saw fail, or a slot migrated), it
// re-sends every own count at once, in a second round: the old master may
// have acknowledged writes its replica never got, and no reply would show
// that loss.
func (n *Node) sync(ctx context.Context, now time.Time, paced bool) error {
	moved, err := n.syncOnce(ctx, now, paced)
	if err == nil && moved {
		_, err = n.syncOnce(ctx, now, paced) // resendAll is set: every own count
	}
	if err == nil && n.cfg.RedisClock && !n.clockKnown.Load() {
		err = n.SyncClock(ctx) // nothing was sent to learn it from
	}
	return err
}

// syncOnce is one round of sync; moved reports an identity whose master
// changed since its last Sync (see byShard), for which resendAll is set.
// It drives a SyncRound, making each batch's Call at once: the masters'
// groups concurrently, each group's batches one after the other.
func (n *Node) syncOnce(ctx context.Context, now time.Time, paced bool) (moved bool, err error) {
	r := n.beginSync(ctx, n.ms(now))
	errs := make([]error, r.Groups())
	var wg sync.WaitGroup
	for g := range r.Groups() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[g] = n.syncGroup(ctx, r, g, paced)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return r.moved, err // the first master's failure, as a *core.UnavailableError
		}
	}
	return r.moved, nil
}

// syncGroup sends group g of r up to SyncDepth batches at a time, each
// handful in one pipeline (ExecAll), pausing between handfuls when paced
// (pauseAfter). A ctx ending during a pause keeps the rest pending and
// returns a *core.UnavailableError wrapping ctx's error; a failed batch
// ends the group (see SyncRound.Finish) and is the error returned.
func (n *Node) syncGroup(ctx context.Context, r *SyncRound, g int, paced bool) error {
	var took time.Duration
	calls := make([]*Call, 0, n.cfg.SyncDepth)
	for first := true; ; first = false {
		if !first && paced && r.more(g) {
			if err := n.sleep(ctx, n.pauseAfter(took)); err != nil {
				r.abandon(g)
				return &core.UnavailableError{Op: "redis reconcile", Err: err}
			}
		}
		calls = calls[:0]
		for c := r.Next(g); c != nil; c = r.Next(g) {
			calls = append(calls, c)
		}
		if len(calls) == 0 {
			return nil
		}
		t0 := time.Now()
		ExecAll(ctx, n.cfg.Redis, calls)
		var failed error
		for _, c := range calls {
			if err := r.Finish(c); err != nil && failed == nil {
				failed = err
			}
		}
		if failed != nil {
			return failed
		}
		took = time.Since(t0)
	}
}

// byShard splits pending by the Redis Cluster master serving each identity
// (one group, in the same order, when Redis is not a cluster), the groups
// in a stable order. moved reports an identity whose master is not the one
// its previous Sync was grouped for (entry.master).
func (n *Node) byShard(ctx context.Context, pending []*entry) (groups []shardGroup, moved bool) {
	if !n.store.Clustered() || len(pending) == 0 {
		return []shardGroup{{entries: pending}}, false
	}
	by := map[string][]*entry{}
	for _, e := range pending {
		s := n.store.Shard(ctx, e.key)
		by[s] = append(by[s], e)
		e.mu.Lock()
		moved = moved || (e.master != "" && s != "" && e.master != s)
		if s != "" {
			e.master = s
		}
		e.mu.Unlock()
	}
	// Groups go in the order of their first pending identity, not by the
	// master's address: a private cluster's ports differ from run to run,
	// and ordering by them made two runs of the same flags send the same
	// batches in different orders (and print different figures).
	names := make([]string, 0, len(by))
	for s := range by {
		names = append(names, s)
	}
	slices.SortFunc(names, func(a, b string) int { return strings.Compare(by[a][0].key, by[b][0].key) })
	groups = make([]shardGroup, len(names))
	for i, s := range names {
		groups[i] = shardGroup{node: s, entries: by[s]}
	}
	return groups, moved
}

// snapshot reads the batch's own counts, rolled to now, and what Redis had
// acknowledged of them (acked[i], same windows): a lower prior in the
// reply means Redis lost data. With Config.Escrow it also reads each
// identity's want and own-unit count into c.
func (n *Node) snapshot(c *Call, now int64) {
	idx, _ := n.position(now)
	c.items = make([]reconcile.Item, len(c.batch))
	c.acked = make([]counts, len(c.batch))
	if c.escrow {
		c.wants, c.adds, c.owned = make([]int64, len(c.batch)), make([]int64, len(c.batch)), make([]bool, len(c.batch))
	}
	for i, e := range c.batch {
		e.mu.Lock()
		e.roll(idx)
		c.items[i] = reconcile.Item{Key: e.key, Index: e.idx, Own: e.own}
		c.acked[i] = e.acked
		if c.escrow {
			es := escrowOf(e)
			c.adds[i] = es.adds
			c.owned[i] = es.owner
			// A view a window ahead of the Sync's clock (gossip from a clock
			// ahead) would have Redis weigh its windows at this clock's
			// elapsed and underestimate: ask no grant, keep the demand.
			if e.idx <= idx {
				c.wants[i] = es.want(n.cfg.Owners)
			}
		}
		e.mu.Unlock()
	}
}

// requeue puts entries back in the Redis pending set after a failure.
func (n *Node) requeue(es []*entry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, e := range es {
		n.queue(&n.redisPending, e, &e.queuedRedis)
	}
}

// maybeResendAll queues every identity with own counts, cached or parked,
// when a full re-send is due, but calm ones never sent (Config.CalmShare).
func (n *Node) maybeResendAll(now int64) {
	n.mu.Lock()
	due := n.resendAll || (n.cfg.Resync > 0 && now-n.lastResync >= n.cfg.Resync.Milliseconds())
	if due {
		n.resendAll = false
		n.lastResync = now
	}
	n.mu.Unlock()
	if !due {
		return
	}
	n.st.resends.Add(1)
	_, elapsed := n.position(now)
	n.queueWhere(now, func(e *entry) bool {
		cur, prev := e.totals()
		// A calm identity Redis never acknowledged was never sent there
		// (Config.CalmShare); one it did may have lost it.
		calm := e.acked == (counts{}) && n.calm(cur, prev, elapsed)
		return e.own != (counts{}) && !calm
	})
}

// queueWhere queues for Redis every identity, cached or parked, holding
// own counts, for which keep (called with its lock held, rolled to now's
// window) is true, in key order, so the batches do not depend on the
// view's shard hashing or list order (a simulator replays them exactly).
// It walks the entries with own counts (ownList), not the whole view.
func (n *Node) queueWhere(now int64, keep func(*entry) bool) {
	idx, _ := n.position(now)
	kept := n.sweepOwn(idx, keep)
	slices.SortFunc(kept, func(a, b *entry) int { return strings.Compare(a.key, b.key) })
	for _, e := range kept {
		n.enqueue(e, true, false)
	}
}
