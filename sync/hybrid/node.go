package hybrid

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/nats-io/nats.go"
)

// Node is one PoP's local-first limiter. It implements core.Limiter and is
// safe for concurrent use. Build it with New; stop it with Close.
type Node struct {
	cfg   Config
	id    string // this PoP counter's field id: PoP#incarnation
	w     int64  // window ms
	cache *lru.Cache[string, *entry]
	store *reconcile.Store
	tr    *gossip.Transport
	sub   *nats.Subscription

	gossipCap int64 // Config.GossipCap × Limit.Max in units, at least 1

	mu            sync.Mutex // guards the pending sets, resend and inbox
	redisPending  map[string]*entry
	gossipPending map[string]*entry
	resendAll     bool
	lastResync    int64
	inbox         []gossip.Message

	audits    chan auditSample // sampled decisions awaiting Audit; nil when AuditRate is 0
	downUntil atomic.Int64     // ms: Redis-decided requests skip Redis before this
	st        stats
	loops     loops
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
		redisPending: map[string]*entry{}, gossipPending: map[string]*entry{}}
	n.gossipCap = cfg.Limit.Max
	if cfg.GossipCap < 1 {
		n.gossipCap = max(1, int64(cfg.GossipCap*float64(cfg.Limit.Max)))
	}
	n.cache, _ = lru.New[string, *entry](cfg.Capacity)
	n.store = reconcile.New(cfg.Redis, cfg.Namespace, n.id, cfg.Limit.Window)
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

// ID is this PoP's counter id (the PoP name, '#', a random incarnation): the
// Redis hash field and the gossip sender of this Node.
func (n *Node) ID() string { return n.id }

// Limit returns the policy enforced.
func (n *Node) Limit() core.Limit { return n.cfg.Limit }

// Stats returns a snapshot of the Node's counters; the Pending gauges are
// read under the lock that guards the pending sets.
func (n *Node) Stats() Stats {
	s := n.st.snapshot()
	n.mu.Lock()
	s.PendingRedis, s.PendingGossip = uint64(len(n.redisPending)), uint64(len(n.gossipPending))
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

// entry returns key's view, creating it (or reviving one evicted from the
// LRU while it still had unsent hits) on a miss.
func (n *Node) entry(key string, now int64) *entry {
	if e, ok := n.cache.Get(key); ok {
		return e
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.redisPending[key]
	if e == nil {
		e = n.gossipPending[key]
	}
	if e == nil {
		idx, _ := n.position(now)
		e = newEntry(key, idx, now)
	}
	prev, found, _ := n.cache.PeekOrAdd(key, e)
	if found {
		return prev
	}
	return e
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
		n.queue(n.redisPending, e, &e.queuedRedis)
	}
	if gossip {
		n.queue(n.gossipPending, e, &e.queuedGossip)
	}
}

// queue adds e to set unless it is full (then the drop is counted; the
// entry's next hit tries again). Called with n.mu held.
func (n *Node) queue(set map[string]*entry, e *entry, flag *atomic.Bool) {
	if flag.Load() {
		return
	}
	if len(set) >= n.cfg.MaxPending {
		n.st.pendingDropped.Add(1)
		return
	}
	set[e.key] = e
	flag.Store(true)
}

// take empties a pending set, clearing its entries' flags first so hits
// arriving from now on queue them again.
func (n *Node) take(redis bool) []*entry {
	n.mu.Lock()
	defer n.mu.Unlock()
	set := n.gossipPending
	if redis {
		set = n.redisPending
	}
	out := make([]*entry, 0, len(set))
	for _, e := range set {
		if redis {
			e.queuedRedis.Store(false)
		} else {
			e.queuedGossip.Store(false)
		}
		out = append(out, e)
	}
	clear(set)
	return out
}

func msDuration(v int64) time.Duration { return time.Duration(max(v, 0)) * time.Millisecond }
