package engine

import "time"

// Event kinds, in the order they run when due at the same instant: what
// has arrived over the network first (at a PoP), then Redis losing its
// state, then calls arriving at Redis (a call arriving at the loss's
// instant finds Redis empty, as pure-Redis mode's do), then crashes, then
// reconciles, then requests.
const (
	evDelivery  = iota // a gossip message reaches a PoP
	evReply            // a Redis reply (or a call's failure) reaches a PoP (honest network)
	evRedisLoss        // Redis loses every key and loaded script (honest network)
	evArrive           // a call reaches Redis, which executes it (honest network)
	evCrash            // a PoP's process dies and restarts (honest network)
	evTick             // a PoP's sync tick: reconcile, then publish gossip
)

// event is one scheduled happening of a mode's loop, at At after the
// start of the trace. seq breaks ties in scheduling order, so the loop is
// deterministic.
type event struct {
	at   time.Duration
	kind int
	pop  int
	seq  uint64
	msg  any // the gossip message of a delivery

	// honest network: the call's incarnation (the PoP process that sent
	// it), when it was sent, the request it decides (-1 for a Sync's
	// batch), and whether the network lost it
	gen  int
	sent time.Duration
	req  int
	lost bool
}

// agenda is a mode's loop's queue of ticks and deliveries, soonest
// first: a binary heap of small keys (entry), each naming its event in a
// slab, events, whose free places are reused. The heap moves 24 bytes a
// step rather than a whole event, holds no pointer for the collector to
// scan, and at 10,000,000 requests keeps its tens of thousands of events
// in flight within the cache; nothing is boxed in an interface
// (container/heap would allocate per event).
type agenda struct {
	heap   []entry
	events []event
	free   []int32 // places of events no longer scheduled
	seq    uint64
}

// entry is one scheduled event in the agenda's heap: when it runs, its
// kind and scheduling order (order, compared after at), and its place in
// the slab.
type entry struct {
	at    time.Duration
	order uint64 // kind<<kindShift | seq
	ev    int32
}

// kindShift places an event's kind above its sequence number in
// entry.order, so that order compares by kind, then in scheduling order
// (sequence numbers stay below 2^56).
const kindShift = 56

// before reports whether x runs before y: sooner, then by kind, then in
// scheduling order.
func before(x, y *entry) bool {
	if x.at != y.at {
		return x.at < y.at
	}
	return x.order < y.order
}

// add schedules ev, stamping it with the next sequence number.
func (a *agenda) add(ev event) {
	a.seq++
	ev.seq = a.seq
	var place int32
	if n := len(a.free); n > 0 {
		place, a.free = a.free[n-1], a.free[:n-1]
		a.events[place] = ev
	} else {
		place = int32(len(a.events))
		a.events = append(a.events, ev)
	}
	a.heap = append(a.heap, entry{at: ev.at, order: uint64(ev.kind)<<kindShift | ev.seq, ev: place})
	for i := len(a.heap) - 1; i > 0; {
		up := (i - 1) / 2
		if !before(&a.heap[i], &a.heap[up]) {
			break
		}
		a.heap[i], a.heap[up] = a.heap[up], a.heap[i]
		i = up
	}
}

// each calls f with every event scheduled, in no particular order.
func (a *agenda) each(f func(ev *event)) {
	for _, en := range a.heap {
		f(&a.events[en.ev])
	}
}

// first is when the soonest scheduled event is due (false: none).
func (a *agenda) first() (time.Duration, bool) {
	if len(a.heap) == 0 {
		return 0, false
	}
	return a.heap[0].at, true
}

// len is how many events are scheduled.
func (a *agenda) len() int { return len(a.heap) }

// next removes and returns the soonest event due at or before t.
func (a *agenda) next(t time.Duration) (event, bool) {
	if len(a.heap) == 0 || a.heap[0].at > t {
		return event{}, false
	}
	place, last := a.heap[0].ev, len(a.heap)-1
	a.heap[0] = a.heap[last]
	a.heap = a.heap[:last]
	for i := 0; ; {
		low := i
		if l := 2*i + 1; l < last && before(&a.heap[l], &a.heap[low]) {
			low = l
		}
		if r := 2*i + 2; r < last && before(&a.heap[r], &a.heap[low]) {
			low = r
		}
		if low == i {
			break
		}
		a.heap[i], a.heap[low] = a.heap[low], a.heap[i]
		i = low
	}
	first := a.events[place]
	a.events[place] = event{} // drop its references
	a.free = append(a.free, place)
	return first, true
}
