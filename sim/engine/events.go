package engine

import (
	"container/heap"
	"time"

	"github.com/edgelimit/edgelimit/sync/hybrid"
)

// Event kinds, in the order they run when due at the same instant: what
// has arrived over the network first (at a PoP, then at Redis), then
// crashes, then reconciles, then requests.
const (
	evDelivery = iota // a gossip message reaches a PoP
	evReply           // a Redis reply (or a call's failure) reaches a PoP (honest network)
	evArrive          // a call reaches Redis, which executes it (honest network)
	evCrash           // a PoP's process dies and restarts (honest network)
	evTick            // a PoP's sync tick: reconcile, then publish gossip
)

// event is one scheduled happening of the hybrid's loop, at At after the
// start of the trace. seq breaks ties in scheduling order, so the loop is
// deterministic.
type event struct {
	at   time.Duration
	kind int
	pop  int
	seq  uint64
	msg  any // the gossip message of a delivery

	// honest network: the call in flight, the Node that made it and its
	// incarnation, when it was sent, the request it decides (-1 for a
	// Sync's batch), and whether the network lost it
	call *hybrid.Call
	node *hybrid.Node
	gen  int
	sent time.Duration
	req  int
	lost bool
	// ticket is the call's place in the redisQueue (0: not queued)
	ticket uint64
}

// agenda is the hybrid loop's queue of ticks and deliveries, soonest first.
type agenda struct {
	items []event
	seq   uint64
}

func (a *agenda) Len() int { return len(a.items) }
func (a *agenda) Less(i, j int) bool {
	x, y := a.items[i], a.items[j]
	if x.at != y.at {
		return x.at < y.at
	}
	if x.kind != y.kind {
		return x.kind < y.kind
	}
	return x.seq < y.seq
}
func (a *agenda) Swap(i, j int) { a.items[i], a.items[j] = a.items[j], a.items[i] }
func (a *agenda) Push(x any)    { a.items = append(a.items, x.(event)) }
func (a *agenda) Pop() any {
	last := a.items[len(a.items)-1]
	a.items[len(a.items)-1] = event{} // the backing array must not keep its Call, Node or message alive
	a.items = a.items[:len(a.items)-1]
	return last
}

// add schedules ev, stamping it with the next sequence number.
func (a *agenda) add(ev event) {
	a.seq++
	ev.seq = a.seq
	heap.Push(a, ev)
}

// next removes and returns the soonest event due at or before t.
func (a *agenda) next(t time.Duration) (event, bool) {
	if len(a.items) == 0 || a.items[0].at > t {
		return event{}, false
	}
	return heap.Pop(a).(event), true
}
