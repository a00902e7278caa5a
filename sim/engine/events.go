package engine

import (
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

// agenda is the hybrid loop's queue of ticks and deliveries, soonest
// first: a binary heap of events held by value (container/heap would box
// each one in an interface, an allocation per event).
type agenda struct {
	items []event
	seq   uint64
}

// before reports whether x runs before y: sooner, then by kind, then in
// scheduling order.
func before(x, y *event) bool {
	if x.at != y.at {
		return x.at < y.at
	}
	if x.kind != y.kind {
		return x.kind < y.kind
	}
	return x.seq < y.seq
}

// add schedules ev, stamping it with the next sequence number.
func (a *agenda) add(ev event) {
	a.seq++
	ev.seq = a.seq
	a.items = append(a.items, ev)
	for i := len(a.items) - 1; i > 0; {
		up := (i - 1) / 2
		if !before(&a.items[i], &a.items[up]) {
			break
		}
		a.items[i], a.items[up] = a.items[up], a.items[i]
		i = up
	}
}

// next removes and returns the soonest event due at or before t.
func (a *agenda) next(t time.Duration) (event, bool) {
	if len(a.items) == 0 || a.items[0].at > t {
		return event{}, false
	}
	first, last := a.items[0], len(a.items)-1
	a.items[0] = a.items[last]
	a.items[last] = event{} // drop its references
	a.items = a.items[:last]
	for i := 0; ; {
		low := i
		if l := 2*i + 1; l < last && before(&a.items[l], &a.items[low]) {
			low = l
		}
		if r := 2*i + 2; r < last && before(&a.items[r], &a.items[low]) {
			low = r
		}
		if low == i {
			break
		}
		a.items[i], a.items[low] = a.items[low], a.items[i]
		i = low
	}
	return first, true
}
