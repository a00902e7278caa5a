package hybrid

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/edgelimit/edgelimit/internal/keybuf"
)

// counts holds cumulative counts of two windows: [0] the entry's window
// idx, [1] window idx-1.
type counts [2]int64

// shift moves counts d windows on.
func (c *counts) shift(d int64) {
	if d == 1 {
		c[1], c[0] = c[0], 0
	} else if d > 1 {
		*c = counts{}
	}
}

// MaxPeers bounds the other PoP counters one identity's view tracks. Counts
// of further counters are ignored and counted in Stats.PeersDropped, except
// that a counter Redis reports takes the place of one known only by gossip.
// A deployment has one counter per PoP incarnation of the last two windows.
const MaxPeers = 64

// peer is another PoP counter's cumulative counts as this view knows them:
// c is what the estimate uses, redis the most Redis reported for that PoP's
// field and gossip the most the PoP claimed by gossip. c is at least redis;
// what it holds above redis (the peer's gossip-only excess) comes from
// gossip and, summed over every peer of the entry, is at most the gossip cap
// per window (see Config.GossipCap). All three only grow within a window.
type peer struct {
	id     peerID // the counter id, interned by the Node (peerIDs)
	c      counts
	redis  counts
	gossip counts
}

func (p *peer) shift(d int64) {
	p.c.shift(d)
	p.redis.shift(d)
	p.gossip.shift(d)
}

func (p *peer) zero() bool {
	return p.c == counts{} && p.redis == counts{} && p.gossip == counts{}
}

// excess is what the view counts for p in slot s above Redis' report.
func (p *peer) excess(s int) int64 { return max(p.c[s]-p.redis[s], 0) }

// entry is one identity's view: the G-counter of its two live windows.
// Fields under mu; the queued flags are read lock-free on the hot path.
type entry struct {
	mu        sync.Mutex
	key       string     // in kbuf when it fits, else a clone
	kbuf      keybuf.Buf // written once, by newEntry (see keybuf)
	idx       int64      // window index of counts[0]
	own       counts     // this PoP's admitted units
	acked     counts     // own counts Redis acknowledged holding
	peers     []peer
	refreshed int64        // ms of the last Redis refresh (or creation)
	escrow    *escrowState // Config.Escrow only (see Node.escrowOf); nil otherwise, so other views pay 8 bytes for it
	master    string       // the Redis Cluster master its last Sync went to; "" before one
	// gone: evicted from the LRU and not parked (no own counts, no room,
	// or Reset). A caller that took the entry before that must not count
	// in it (see Node.lockLive); reviving it from a pending set clears it.
	gone bool
	// listed: in the Node's ownList (see there).
	listed bool

	queuedRedis  atomic.Bool
	queuedGossip atomic.Bool
	promoted     uint64 // its view shard's inserts at its last move to the front; guarded by that shard's lock
	// newer, older: its neighbours in its view shard's LRU list (nil at
	// the ends, and out of the view); guarded by that shard's lock.
	newer, older *entry
}

func newEntry(key string, idx, now int64) *entry {
	e := &entry{idx: idx, refreshed: now}
	e.key = e.kbuf.Own(key)
	return e
}

// roll brings the entry to window idx; older indexes change nothing.
func (e *entry) roll(idx int64) {
	d := idx - e.idx
	if d <= 0 {
		return
	}
	e.own.shift(d)
	e.acked.shift(d)
	live := e.peers[:0]
	for _, p := range e.peers {
		p.shift(d)
		if !p.zero() {
			live = append(live, p)
		}
	}
	clear(e.peers[len(live):])
	e.peers = live
	e.idx = idx
}

// totals sums every PoP's counts of the two windows.
func (e *entry) totals() (cur, prev int64) {
	cur, prev = e.own[0], e.own[1]
	for i := range e.peers {
		cur += e.peers[i].c[0]
		prev += e.peers[i].c[1]
	}
	return cur, prev
}

// alone reports whether the view knows of no other PoP's count of the
// identity in its two windows.
func (e *entry) alone() bool {
	for i := range e.peers {
		if e.peers[i].c != (counts{}) {
			return false
		}
	}
	return true
}

// slot maps absolute window win to a counts index, rolling forward when
// win is newer; ok is false for windows already out of the view.
func (e *entry) slot(win int64) (int, bool) {
	e.roll(win)
	s := e.idx - win
	return int(s), s >= 0 && s <= 1
}

// peerAt returns peer id's record, adding an empty one when missing; nil
// when the entry already tracks MaxPeers others (a trusted, Redis-reported
// id then replaces one known only by gossip, if any).
func (e *entry) peerAt(id peerID, trusted bool) *peer {
	for i := range e.peers {
		if e.peers[i].id == id {
			return &e.peers[i]
		}
	}
	if len(e.peers) < MaxPeers {
		e.peers = append(e.peers, peer{id: id})
		return &e.peers[len(e.peers)-1]
	}
	if trusted {
		for i := range e.peers {
			if e.peers[i].redis == (counts{}) {
				e.peers[i] = peer{id: id}
				return &e.peers[i]
			}
		}
	}
	return nil
}

// excess is the gossip-only excess of slot s summed over every peer.
func (e *entry) excess(s int) int64 {
	var sum int64
	for i := range e.peers {
		sum = satAdd(sum, e.peers[i].excess(s))
	}
	return sum
}

// settle recomputes p.c[s] (never lowering it) from Redis' report and the
// gossip claim, the claim counting only as far as the entry's gossip budget
// (cap units of excess over all peers) leaves room: c = max(c, redis,
// min(gossip, redis + room)).
func (e *entry) settle(p *peer, s int, cap int64) {
	room := max(cap-(e.excess(s)-p.excess(s)), 0)
	g := min(p.gossip[s], satAdd(p.redis[s], room))
	p.c[s] = max(p.c[s], p.redis[s], g)
}

// mergeRedis raises peer id's Redis-reported count of window win to v
// (max-merge; Redis is trusted, no cap). The budget that frees lets other
// peers' clamped claims count again. dropped reports a peer not tracked
// (MaxPeers).
func (e *entry) mergeRedis(id peerID, win, v, cap int64) (dropped bool) {
	s, ok := e.slot(win)
	if !ok || v <= 0 {
		return false
	}
	p := e.peerAt(id, true)
	if p == nil {
		return true
	}
	if v <= p.redis[s] {
		return false
	}
	p.redis[s] = v
	e.settle(p, s, cap)
	for i := range e.peers {
		if e.peers[i].gossip[s] > e.peers[i].c[s] {
			e.settle(&e.peers[i], s, cap)
		}
	}
	return false
}

// mergeGossip raises peer id's gossip-claimed count of window win to v
// (max-merge) and reports whether the claim was clamped (the view counts
// less than v for that peer: the entry's gossip budget, cap units above
// Redis' reports summed over all peers, is spent) or dropped (a new peer
// beyond MaxPeers).
func (e *entry) mergeGossip(id peerID, win, v, cap int64) (clamped, dropped bool) {
	s, ok := e.slot(win)
	if !ok || v <= 0 {
		return false, false
	}
	p := e.peerAt(id, false)
	if p == nil {
		return false, true
	}
	p.gossip[s] = max(p.gossip[s], v)
	e.settle(p, s, cap)
	return v > p.c[s], false
}

// satAdd is a+b for non-negative a and b, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// addOwn counts n admitted units in window win, the window of the request
// that admitted them, even when the entry is ahead of it (gossip from a
// clock ahead rolled it on); units of a window that already left the view
// (two or more behind the entry) no longer weigh in any estimate and are
// not kept, so they never reach Redis (see the package doc).
func (e *entry) addOwn(win, n int64) {
	if e.escrow != nil {
		e.escrow.adds += n
	}
	if s, ok := e.slot(win); ok {
		e.own[s] += n
	}
}

// ack records that Redis holds at least v of this PoP's units in window win.
func (e *entry) ack(win, v int64) {
	if s, ok := e.slot(win); ok {
		e.acked[s] = max(e.acked[s], v)
	}
}

// unacked reports whether the view counts more of this PoP's units in a
// live window than Redis acknowledged holding.
func (e *entry) unacked() bool { return e.own[0] > e.acked[0] || e.own[1] > e.acked[1] }

// ackedAt is the acknowledged own count of window win (0 when out of view).
func (e *entry) ackedAt(win int64) int64 {
	s := e.idx - win
	if s < 0 || s > 1 {
		return 0
	}
	return e.acked[s]
}
