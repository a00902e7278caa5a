package hybrid

import (
	"math"
	"sync"
	"sync/atomic"
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

// peer is another PoP counter's cumulative counts as this view knows them:
// c is what the estimate uses, max(redis, min(gossip, redis+cap)) per
// window, where redis is the most Redis reported for that PoP's field and
// gossip the most the PoP claimed by gossip (see Config.GossipCap). All
// three only grow within a window.
type peer struct {
	id     string
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

// settle recomputes p.c[s] from the two sources; it never lowers it.
func (p *peer) settle(s int, cap int64) {
	g := min(p.gossip[s], satAdd(p.redis[s], cap))
	p.c[s] = max(p.c[s], p.redis[s], g)
}

// entry is one identity's view: the G-counter of its two live windows.
// Fields under mu; the queued flags are read lock-free on the hot path.
type entry struct {
	mu        sync.Mutex
	key       string
	idx       int64  // window index of counts[0]
	own       counts // this PoP's admitted units
	acked     counts // own counts Redis acknowledged holding
	peers     []peer
	refreshed int64 // ms of the last Redis refresh (or creation)

	queuedRedis  atomic.Bool
	queuedGossip atomic.Bool
}

func newEntry(key string, idx, now int64) *entry {
	return &entry{key: key, idx: idx, refreshed: now}
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

// slot maps absolute window win to a counts index, rolling forward when
// win is newer; ok is false for windows already out of the view.
func (e *entry) slot(win int64) (int, bool) {
	e.roll(win)
	s := e.idx - win
	return int(s), s >= 0 && s <= 1
}

// peerAt returns peer id's record, adding an empty one when missing.
func (e *entry) peerAt(id string) *peer {
	for i := range e.peers {
		if e.peers[i].id == id {
			return &e.peers[i]
		}
	}
	e.peers = append(e.peers, peer{id: id})
	return &e.peers[len(e.peers)-1]
}

// mergeRedis raises peer id's Redis-reported count of window win to v
// (max-merge; Redis is trusted, no cap).
func (e *entry) mergeRedis(id string, win, v, cap int64) {
	s, ok := e.slot(win)
	if !ok || v <= 0 {
		return
	}
	p := e.peerAt(id)
	p.redis[s] = max(p.redis[s], v)
	p.settle(s, cap)
}

// mergeGossip raises peer id's gossip-claimed count of window win to v
// (max-merge) and reports whether the claim was clamped: the view counts at
// most cap units above what Redis last reported for that peer.
func (e *entry) mergeGossip(id string, win, v, cap int64) (clamped bool) {
	s, ok := e.slot(win)
	if !ok || v <= 0 {
		return false
	}
	p := e.peerAt(id)
	p.gossip[s] = max(p.gossip[s], v)
	p.settle(s, cap)
	return v > satAdd(p.redis[s], cap)
}

// satAdd is a+b for non-negative a and b, saturating at math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// addOwn counts n admitted units in window win; units of a window that
// already left the view no longer weigh in any estimate and are not kept.
func (e *entry) addOwn(win, n int64) {
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

// ackedAt is the acknowledged own count of window win (0 when out of view).
func (e *entry) ackedAt(win int64) int64 {
	s := e.idx - win
	if s < 0 || s > 1 {
		return 0
	}
	return e.acked[s]
}
