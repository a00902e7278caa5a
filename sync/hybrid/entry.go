package hybrid

import (
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

// peer is another PoP counter's cumulative counts as this view knows them.
type peer struct {
	id string
	c  counts
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
		p.c.shift(d)
		if p.c != (counts{}) {
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

// mergePeer raises peer id's count of window win to v (max-merge).
func (e *entry) mergePeer(id string, win, v int64) {
	s, ok := e.slot(win)
	if !ok || v <= 0 {
		return
	}
	for i := range e.peers {
		if e.peers[i].id == id {
			e.peers[i].c[s] = max(e.peers[i].c[s], v)
			return
		}
	}
	p := peer{id: id}
	p.c[s] = v
	e.peers = append(e.peers, p)
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
