package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sim/netmodel"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/hybrid"
)

// callTimeout is how long a PoP waits for a reply the network lost (a
// partition) before the call fails: the order of a go-redis read timeout.
const callTimeout = time.Second

// Errors the honest network hands a Node's failed calls.
var (
	errRefused = errors.New("simulated: redis refused the connection (outage)")
	errLost    = errors.New("simulated: no reply within the call timeout (partition)")
)

// honest is the hybrid loop's state on the honest network: each PoP's
// Redis calls travel through the event loop (see runHybridHonest).
type honest struct {
	s      *hybridSim
	links  *netmodel.Links
	faults netmodel.Faults
	gen    []int          // per PoP: its incarnation (crashes so far)
	inc    []int32        // per PoP: its incarnation's number in the ledger
	syncs  []syncState    // per PoP
	ledger *ledger        // units each incarnation admitted, for the loss count
	dead   []*hybrid.Node // crashed incarnations, in crash order, never closed
	redis  *redisQueue    // Calls that reached Redis, run by its own goroutines, each key's in arrival order
}

// syncState is one PoP's Sync in flight: its round, its batches out, and
// whether a tick came while it ran (the real loop's ticker then fires
// once more as soon as it returns).
type syncState struct {
	round *hybrid.SyncRound
	out   int
	again bool
}

func runHybridHonest(ctx context.Context, e *Env) (*outcome, error) {
	return e.runHybridHonest(ctx, true)
}

func runHybridNoGossipHonest(ctx context.Context, e *Env) (*outcome, error) {
	return e.runHybridHonest(ctx, false)
}

// runHybridEscrowHonest is the hybrid with escrowed allowances
// (hybrid.Config.Escrow) and gossip.
func runHybridEscrowHonest(ctx context.Context, e *Env) (*outcome, error) {
	return e.runHybridHonestWith(ctx, true, true)
}

// runHybridHonest plays the trace through one sync/hybrid Node per PoP on
// the honest network. A request the view decides is answered at once; one
// it sends to Redis (Node.Begin's Call) reaches Redis one drawn one-way
// delay later, is executed there on the real Redis at that instant (calls
// of every PoP in the order they arrive), and its reply is applied, and
// the request answered, one drawn delay after that. A PoP's Sync sends its
// batches the same way, one after the other, and never overlaps the next
// Sync. Gossip goes through the real NATS and is delivered at a drawn
// delay. Faults (Env.Faults) refuse, lose, duplicate or crash along the
// way. After the trace every call in flight lands, each live PoP flushes
// (Sync, as Close does), and the ledger counts what Redis never got.
func (e *Env) runHybridHonest(ctx context.Context, withGossip bool) (*outcome, error) {
	return e.runHybridHonestWith(ctx, withGossip, false)
}

// runHybridHonestWith is runHybridHonest, with escrow set on every Node.
func (e *Env) runHybridHonestWith(ctx context.Context, withGossip, escrow bool) (*outcome, error) {
	h, err := e.startHonestWith(ctx, withGossip, escrow)
	if err != nil {
		return nil, err
	}
	defer h.s.close()
	if err := h.play(); err != nil {
		return nil, err
	}
	o, err := h.finish()
	if err == nil {
		o.view = h.s.releaseViews()
	}
	return o, err
}

// startHonest builds every PoP's Node and schedules the ticks and crashes.
func (e *Env) startHonest(ctx context.Context, withGossip bool) (*honest, error) {
	return e.startHonestWith(ctx, withGossip, false)
}

func (e *Env) startHonestWith(ctx context.Context, withGossip, escrow bool) (*honest, error) {
	s := &hybridSim{e: e, ctx: ctx, ids: map[string]int{}, out: newOutcome(len(e.Trace.Requests)), escrow: escrow}
	if err := s.open(withGossip); err != nil {
		s.close()
		return nil, err
	}
	pops := len(s.pops)
	h := &honest{s: s, links: netmodel.NewLinks(e.Net, e.Jitter, e.Trace.Config.Seed),
		faults: e.Faults, gen: make([]int, pops), inc: make([]int32, pops), syncs: make([]syncState, pops),
		ledger: newLedger(e)}
	s.honest = h
	h.redis = newRedisQueue(ctx, s.pops[0].redis, !escrow) // an escrow decision may touch more than its identity's keys
	for p := range pops {
		h.inc[p] = h.ledger.incarnation(s.pops[p].node.ID())
		s.agenda.add(event{at: e.SyncInterval * time.Duration(p) / time.Duration(pops), kind: evTick, pop: p})
	}
	for _, c := range e.Faults.Crashes {
		s.agenda.add(event{at: c.At, kind: evCrash, pop: c.PoP})
	}
	return h, nil
}

// play runs the trace: each request after every event due by its time.
func (h *honest) play() error {
	for i, r := range h.s.e.Trace.Requests {
		if err := h.runUntil(r.At); err != nil {
			return err
		}
		if err := h.decide(i); err != nil {
			return err
		}
		h.s.e.progress(i + 1)
	}
	return nil
}

// settle runs every event still scheduled: the calls and messages in
// flight land (no tick is scheduled past the trace).
func (h *honest) settle() error {
	err := h.runUntil(1<<62 - 1)
	h.redis.drain() // a crashed incarnation's calls that reached Redis still ran there
	return err
}

// finish ends the run as Close would end each PoP: what is in flight
// lands, a last Gossip is delivered, a last Sync flushes; then the round
// trips are summed and the ledger counts what Redis never got.
func (h *honest) finish() (*outcome, error) {
	s := h.s
	if err := h.settle(); err != nil {
		return nil, err
	}
	h.tally() // the run's traffic; the shutdown's below is not counted (as in the ideal loop)
	if err := h.lastGossip(); err != nil {
		return nil, err
	}
	if err := h.flush(); err != nil {
		return nil, err
	}
	if s.calm > 0 {
		return s.out, nil // lost not measured: calm units never reach Redis once their windows pass, by design
	}
	lost, err := h.ledger.lost(s.ctx, s.e)
	if err != nil {
		return nil, err
	}
	s.out.lost = lost.total
	for _, n := range h.dead {
		s.out.crashLost = append(s.out.crashLost, lost.by[n.ID()])
	}
	return s.out, nil
}

// tally sums the round trips and gossip of every incarnation of every
// PoP, crashed ones too. Round trips are the Nodes' own count of calls
// sent (Stats.RedisRoundTrips): a call refused in an outage or lost in a
// partition was sent, and costs its round trip, as in pure-Redis mode.
func (h *honest) tally() {
	nodes := slices.Clone(h.dead)
	for _, p := range h.s.pops {
		nodes = append(nodes, p.node)
	}
	for _, n := range nodes {
		st := n.Stats()
		h.s.out.roundTrips += int64(st.RedisRoundTrips)
		h.s.out.natsMsgs += int64(st.GossipSent)
		h.s.out.natsBytes += int64(st.GossipBytes)
	}
}

// lastGossip publishes each PoP's last gossip at the end of the trace and
// delivers it.
func (h *honest) lastGossip() error {
	for p := range h.s.pops {
		if err := h.s.publish(p, h.s.e.Trace.Duration); err != nil {
			return err
		}
	}
	return h.settle()
}

// runUntil runs every event due at or before t.
func (h *honest) runUntil(t time.Duration) error {
	s := h.s
	for {
		ev, ok := s.agenda.next(t)
		if !ok {
			return nil
		}
		var err error
		switch ev.kind {
		case evDelivery:
			s.pops[ev.pop].node.ApplyGossip(ev.msg.(gossip.Message), s.now(ev.pop, ev.at))
		case evReply:
			h.reply(ev)
		case evArrive:
			h.arrive(ev)
		case evCrash:
			err = h.crash(ev)
		case evTick:
			err = h.tick(ev)
		}
		if err != nil {
			return err
		}
	}
}

// decide asks request i's PoP; a request its view cannot decide waits for
// its Call's reply: until then it is open, its Call's event (arrival, then
// reply) on the agenda, which carries the window clock it was decided at.
func (h *honest) decide(i int) error {
	s, r := h.s, h.s.e.Trace.Requests[i]
	p := int(r.PoP)
	now := s.now(p, r.At)
	node := s.pops[p].node
	win := now.Add(node.ClockOffset()).UnixMilli() // the time the Node counts in (its window clock)
	d, c, err := node.Begin(s.ctx, s.e.Key(r.ID), now, int64(r.N))
	if err != nil && !errors.Is(err, core.ErrUnavailable) {
		return fmt.Errorf("hybrid decision %d at pop %d: %w", i, p, err)
	}
	if c == nil {
		h.answer(i, p, win, d.Allowed, 0)
		return nil
	}
	h.send(p, c, r.At, i, win)
	return nil
}

// answer records request i's decision, and its units in the ledger of the
// incarnation that admitted them, in the window of win (the time the Node
// counted them at, ms).
func (h *honest) answer(i, p int, win int64, allowed bool, lat time.Duration) {
	s := h.s
	s.out.allowed[i], s.out.latency[i] = allowed, lat
	if allowed {
		r := s.e.Trace.Requests[i]
		h.ledger.add(h.inc[p], r.ID, win, int64(r.N))
	}
}

// send puts PoP p's call c on the network at at: lost at once when p is
// partitioned (it fails at its timeout), else it reaches Redis one drawn
// delay later. req is the request it decides, at window clock win (ms), or
// -1 for a Sync's batch.
func (h *honest) send(p int, c *hybrid.Call, at time.Duration, req int, win int64) {
	ev := event{kind: evArrive, pop: p, call: c, node: h.s.pops[p].node, gen: h.gen[p], sent: at, req: req, win: win}
	if h.faults.Cut(p, at) {
		ev.kind, ev.at, ev.lost = evReply, at+callTimeout, true
		h.s.agenda.add(ev)
		return
	}
	ev.at = at + h.links.Up(p)
	h.s.agenda.add(ev)
}

// arrive executes a call at Redis at its arrival (or refuses it during an
// outage) and sends the reply back; a reply due at a partitioned PoP is
// lost, and the call fails at its timeout. The call runs at the real Redis
// after every call that arrived before it, and its reply waits for it
// (redisQueue).
func (h *honest) arrive(ev event) {
	if h.faults.RedisOutage.Has(ev.at) {
		ev.node.Fail(ev.call, errRefused)
	} else {
		id := -1 // a Sync's batch
		if ev.req >= 0 {
			id = int(h.s.e.Trace.Requests[ev.req].ID)
		}
		ev.ticket = h.redis.add(ev.call, h.s.e.Start.Add(ev.at), id) // Redis' clock is true time
	}
	ev.kind, ev.at = evReply, ev.at+h.links.Down(ev.pop)
	if h.faults.Cut(ev.pop, ev.at) {
		ev.at, ev.lost = max(ev.at, ev.sent+callTimeout), true
	}
	h.s.agenda.add(ev)
}

// reply hands a call's outcome to the PoP that made it, unless that
// process crashed meanwhile (the reply finds no one).
func (h *honest) reply(ev event) {
	if ev.gen != h.gen[ev.pop] {
		return
	}
	if ev.ticket > 0 {
		h.redis.wait(ev.ticket)
	}
	s := h.s
	s.now(ev.pop, ev.at) // the PoP's clock reads the reply's arrival (a failure is detected then)
	if ev.lost {
		ev.node.Fail(ev.call, errLost)
	}
	if ev.call.Batch() {
		st := &h.syncs[ev.pop]
		_ = st.round.Finish(ev.call) // a failure requeues the rest and marks Redis down
		st.out--
		h.sendNext(ev.pop, ev.at)
		return
	}
	d, err := ev.node.Complete(ev.call)
	if err != nil && !errors.Is(err, core.ErrUnavailable) {
		panic(fmt.Sprintf("hybrid complete at pop %d: %v", ev.pop, err)) // a seam misuse, not a run condition
	}
	h.answer(ev.req, ev.pop, ev.win, d.Allowed, ev.at-s.e.Trace.Requests[ev.req].At)
}

// tick publishes PoP ev.pop's gossip and starts its Sync, or, with one
// still in flight, has it start again as soon as that one ends.
func (h *honest) tick(ev event) error {
	s := h.s
	if err := s.publish(ev.pop, ev.at); err != nil {
		return err
	}
	if st := &h.syncs[ev.pop]; st.round != nil {
		st.again = true
	} else {
		h.startSync(ev.pop, ev.at)
	}
	if next := ev.at + s.e.SyncInterval; next < s.e.Trace.Duration {
		s.agenda.add(event{at: next, kind: evTick, pop: ev.pop})
	}
	return nil
}

// startSync begins PoP p's Sync at at and sends its first batches.
func (h *honest) startSync(p int, at time.Duration) {
	h.syncs[p] = syncState{round: h.s.pops[p].node.BeginSync(h.s.now(p, at))}
	h.sendNext(p, at)
}

// sendNext sends the next batches of each group of PoP p's Sync, as many
// as its SyncDepth lets out at once (each its own call on the network:
// a Node sends them in one pipeline, and the model draws each trip); when
// none is left the Sync ends, and one more starts at once if a tick came
// meanwhile.
func (h *honest) sendNext(p int, at time.Duration) {
	st := &h.syncs[p]
	for g := range st.round.Groups() {
		for c := st.round.Next(g); c != nil; c = st.round.Next(g) {
			st.out++
			h.send(p, c, at, -1, 0)
		}
	}
	if st.out > 0 {
		return
	}
	again := st.again
	*st = syncState{}
	if again {
		h.startSync(p, at)
	}
}

// deliver schedules one copy of gossip message m from PoP from to PoP to,
// sent at at: lost by chance or when either end is partitioned at its
// end of the trip, delivered twice by chance.
func (h *honest) deliver(from, to int, at time.Duration, m gossip.Message) {
	copies := 1
	if h.links.Chance(h.faults.GossipDup) {
		copies = 2
	}
	for range copies {
		arrive := at + h.links.Peer(from, to)
		if h.links.Chance(h.faults.GossipLoss) || h.faults.Cut(from, at) || h.faults.Cut(to, arrive) {
			continue
		}
		h.s.agenda.add(event{at: arrive, kind: evDelivery, pop: to, msg: m})
	}
}

// crash kills PoP ev.pop's process at ev.at: its Node is dropped without
// a flush (what it had not sent is lost, what it sent still lands at
// Redis), requests awaiting a reply die with it (counted denied: the
// client got no answer), and a new incarnation starts at once, empty.
func (h *honest) crash(ev event) error {
	s, p := h.s, ev.pop
	old := s.pops[p]
	h.dead = append(h.dead, old.node)
	s.agenda.each(func(open *event) { // its open requests: their Calls' events
		if open.pop == p && open.gen == h.gen[p] && open.req >= 0 && (open.kind == evArrive || open.kind == evReply) {
			s.out.latency[open.req] = ev.at - s.e.Trace.Requests[open.req].At
		}
	})
	h.syncs[p] = syncState{}
	h.gen[p]++
	if old.nc != nil {
		old.nc.Close() // its subscription dies with the process
	}
	node, nc, err := s.newNode(p, old.nc != nil)
	if err != nil {
		return fmt.Errorf("restart of pop %d after its crash: %w", p, err)
	}
	old.node, old.nc = node, nc
	s.ids[node.ID()] = p
	h.inc[p] = h.ledger.incarnation(node.ID())
	return nil
}

// flush is every live PoP's final Flush after the trace, as Close makes it.
func (h *honest) flush() error {
	s := h.s
	for p, pp := range s.pops {
		if err := pp.node.Flush(s.ctx, s.now(p, s.e.Trace.Duration)); err != nil {
			return fmt.Errorf("final flush of pop %d: %w", p, err)
		}
	}
	return nil
}
