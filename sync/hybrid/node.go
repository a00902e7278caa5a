package hybrid

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/topology"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	"github.com/nats-io/nats.go"
)

// Node is one PoP's local-first limiter. It implements core.Limiter and is
// safe for concurrent use. Build it with New; stop it with Close.
type Node struct {
	cfg   Config
	milli core.MilliClock // core.MilliClockOf(cfg.Clock): nil means read Now
	id    string          // this PoP counter's field id: PoP#incarnation
	w     int64           // window ms
	cache *viewLRU
	store *reconcile.Store
	tr    *gossip.Transport
	sub   *nats.Subscription

	gossipCap int64 // Config.GossipCap × Limit.Max in units, at least 1

	peerIDs peerIDs // the other PoPs' counter ids, interned for the views

	// mu guards the pending sets, the parked entries, resend and inbox.
	// Every cache call that can evict (adding an entry, Remove) is made with
	// mu held, so the eviction callback (evicted) runs with it held too.
	mu            sync.Mutex
	redisPending  pendingSet
	gossipPending pendingSet
	parked        map[string]*entry // evicted from the LRU with own counts; at most MaxPending
	noPark        bool              // set while Reset removes an entry: do not park it
	resendAll     bool
	lastResync    int64
	inbox         []gossip.Message

	owned ownList // the entries holding own counts, for walks over them

	audits chan auditSample                                 // sampled decisions awaiting Audit; nil when AuditRate is 0
	down   downSet                                          // Redis nodes that Redis-decided requests skip for now
	reload topology.Reloader                                // slot-map reloads after errors (cluster only)
	sleep  func(ctx context.Context, d time.Duration) error // Sync's pause between batches; sleepCtx, tests record it
	ticker func(d time.Duration) (<-chan time.Time, func()) // the loops' ticker and its stop; wallTicker, tests tick by hand
	st     stats
	loops  loops
	closed atomic.Bool  // set by Close: every decision then returns core.ErrClosed
	busy   inflight     // decisions under way, which Close waits for
	offset atomic.Int64 // ms added to every time handed in: Redis' clock minus this PoP's (Config.RedisClock; else 0)
	// clockKnown: an offset was learned (Config.RedisClock); until then
	// every Sync asks Redis' TIME first.
	clockKnown atomic.Bool
}

// New validates cfg and returns a ready Node (it makes no Redis call). With
// cfg.NATS set it subscribes to the namespace's gossip subject at once.
// Errors: core.ErrBadLimit, core.ErrBadWindow, core.ErrBadAlgorithm (not a
// sliding window) or ErrBadConfig (matching core.ErrInvalid) for bad
// config; a *core.UnavailableError when the subscription fails.
func New(cfg Config) (*Node, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, w: cfg.Limit.WindowMillis(),
		id:           fmt.Sprintf("%s#%08x", cfg.PoP, rand.Uint32()),
		redisPending: newPendingSet(), gossipPending: newPendingSet(),
		parked: map[string]*entry{}, sleep: sleepCtx, ticker: wallTicker}
	n.busy = newInflight()
	n.milli = core.MilliClockOf(cfg.Clock)
	n.gossipCap = cfg.Limit.Max
	if cfg.GossipCap < 1 {
		n.gossipCap = max(1, int64(cfg.GossipCap*float64(cfg.Limit.Max)))
	}
	n.cache = newViewLRU(cfg.Capacity, n.evicted)
	n.store = reconcile.New(cfg.Redis, cfg.Namespace, n.id, cfg.Limit.Window,
		reconcile.WithExpirySlack(cfg.ExpirySlack))
	n.lastResync = core.Millis(cfg.Clock.Now())
	n.initAudit()
	if cfg.NATS != nil {
		n.tr = gossip.NewTransport(cfg.NATS, cfg.Namespace)
		sub, err := n.tr.Subscribe(n.receive)
		if err != nil {
			return nil, err
		}
		n.sub = sub
		_ = cfg.NATS.FlushTimeout(time.Second) // register the subscription before returning
	}
	return n, nil
}

// isClosed reports whether Close has begun.
func (n *Node) isClosed() bool { return n.closed.Load() }

// ID is this PoP's counter id (the PoP name, '#', a random incarnation): the
// Redis hash field and the gossip sender of this Node.
func (n *Node) ID() string { return n.id }

// Limit returns the policy enforced.
func (n *Node) Limit() core.Limit { return n.cfg.Limit }

// Stats returns a snapshot of the Node's counters; the Pending gauges are
// read under the lock that guards the pending sets, RedisDown at the
// Clock's now.
func (n *Node) Stats() Stats {
	s := n.st.snapshot()
	s.RedisDown = uint64(n.down.count(n.ms(n.cfg.Clock.Now())))
	n.mu.Lock()
	s.PendingRedis, s.PendingGossip = uint64(n.redisPending.len()), uint64(n.gossipPending.len())
	s.Parked = uint64(len(n.parked))
	n.mu.Unlock()
	return s
}

// position is now's window index and the ms elapsed in it.
func (n *Node) position(now int64) (idx, elapsed int64) {
	idx = now / n.w
	if now%n.w < 0 {
		idx--
	}
	return idx, now - idx*n.w
}

// entry returns key's view, creating it on a miss, or reviving the entry
// evicted from the LRU while it still held own counts (parked) or unsent
// hits (pending): a recreated entry would count this PoP's units from 0,
// and max-merge at Redis and in other views would hide the new ones under
// the old field value. With fromGossip it returns nil instead of adding an
// identity unknown here when that would evict an entry holding own counts
// (counted in Stats.GossipSkipped): gossip about identities this PoP does
// not serve does not push out those it does.
func (n *Node) entry(key string, now int64, fromGossip bool) *entry {
	if e, ok := n.cache.Touch(key); ok {
		return e
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if e, ok := n.cache.Peek(key); ok { // added meanwhile
		return e
	}
	e := n.detached(key)
	if e != nil {
		delete(n.parked, key)
		e.mu.Lock()
		e.gone = false
		e.mu.Unlock()
	} else {
		if fromGossip && n.cache.Full(key) && n.oldestHoldsOwn(key) {
			n.st.gossipSkipped.Add(1)
			return nil
		}
		idx, _ := n.position(now)
		e = newEntry(key, idx, now)
	}
	n.cache.Add(e.key, e) // may evict: evicted runs here, with n.mu held
	return e
}

// detached returns key's entry when it is out of the LRU but still held:
// parked or pending. Called with n.mu held.
func (n *Node) detached(key string) *entry {
	if e := n.parked[key]; e != nil {
		return e
	}
	if e := n.redisPending.get(key); e != nil {
		return e
	}
	return n.gossipPending.get(key)
}

// lockLive locks e and returns it or, when e left the view meanwhile
// without being parked (gone), locks and returns the entry now standing for
// its key (nil, with nothing locked, when fromGossip and entry gives none):
// units counted in a gone entry would be lost.
func (n *Node) lockLive(e *entry, now int64, fromGossip bool) *entry {
	for {
		e.mu.Lock()
		if !e.gone {
			return e
		}
		e.mu.Unlock()
		if e = n.entry(e.key, now, fromGossip); e == nil {
			return nil
		}
	}
}

// lookup returns key's entry, in the LRU or detached, without creating one.
func (n *Node) lookup(key string) (*entry, bool) {
	if e, ok := n.cache.Peek(key); ok {
		return e, true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.detached(key)
	return e, e != nil
}

// oldestHoldsOwn reports whether the entry that adding key to the LRU would
// evict holds own counts. Called with n.mu held.
func (n *Node) oldestHoldsOwn(key string) bool {
	e, ok := n.cache.OldestOf(key)
	if !ok {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.own != counts{}
}

// evicted is the LRU's eviction callback: it parks an entry that still
// holds own counts so entry can revive it (at most MaxPending parked; beyond
// that the entry is lost and counted in Stats.EvictedWithCounts). Sync drops
// parked entries whose own counts left the live windows. The view's LRU
// calls it inside the evicting shard's lock, in the goroutine that evicted,
// which holds n.mu (see Node.mu): the lock order is n.mu, then a shard, then
// an entry's mu, and nothing takes a shard lock holding an entry's mu.
func (n *Node) evicted(key string, e *entry) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case n.noPark || e.own == counts{}:
		e.gone = true
	case len(n.parked) >= n.cfg.MaxPending:
		n.st.evictedWithCounts.Add(1)
		e.gone = true
	default:
		n.parked[key] = e
	}
}

// sweepParked drops the parked entries with no own counts left in the live
// windows at idx.
func (n *Node) sweepParked(idx int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for k, e := range n.parked {
		e.mu.Lock()
		e.roll(idx)
		dead := e.own == counts{}
		e.gone = dead
		e.mu.Unlock()
		if dead {
			delete(n.parked, k)
		}
	}
}

// enqueue marks e as holding hits not yet sent to Redis and/or by gossip.
func (n *Node) enqueue(e *entry, redis, gossip bool) {
	redis = redis && !e.queuedRedis.Load()
	gossip = gossip && n.tr != nil && !e.queuedGossip.Load()
	if !redis && !gossip {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if redis {
		n.queue(&n.redisPending, e, &e.queuedRedis)
	}
	if gossip {
		n.queue(&n.gossipPending, e, &e.queuedGossip)
	}
}

// queue adds e to set unless it is full (then the drop is counted; the
// entry's next hit tries again). Called with n.mu held.
func (n *Node) queue(set *pendingSet, e *entry, flag *atomic.Bool) {
	if flag.Load() {
		return
	}
	if set.len() >= n.cfg.MaxPending {
		n.st.pendingDropped.Add(1)
		return
	}
	put(set, e, flag)
}

// put adds e to set, past MaxPending, and sets its queued flag. Called
// with n.mu held and the flag unset.
func put(set *pendingSet, e *entry, flag *atomic.Bool) {
	set.add(e)
	flag.Store(true)
}

// take empties a pending set, in queue order, clearing its entries' flags
// first so hits arriving from now on queue them again.
func (n *Node) take(redis bool) []*entry {
	n.mu.Lock()
	defer n.mu.Unlock()
	set := &n.gossipPending
	if redis {
		set = &n.redisPending
	}
	out := set.take()
	for _, e := range out {
		if redis {
			e.queuedRedis.Store(false)
		} else {
			e.queuedGossip.Store(false)
		}
	}
	return out
}

func msDuration(v int64) time.Duration { return time.Duration(max(v, 0)) * time.Millisecond }
