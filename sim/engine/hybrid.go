package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// pop is one simulated PoP of the hybrid: its Node, its own Redis client
// (whose round trips are counted), its NATS connection and its clock (true
// time plus the PoP's skew), which every time handed to the Node reads.
type pop struct {
	node  *hybrid.Node
	redis goredis.UniversalClient
	trips *tripCounter
	nc    *nats.Conn
	clock *core.ManualClock
}

// hybridSim is the state of one hybrid run.
type hybridSim struct {
	e      *Env
	ctx    context.Context
	pops   []*pop
	ids    map[string]int // each Node's counter id → its PoP number
	agenda agenda
	out    *outcome
	honest *honest // the honest network's state; nil on the ideal one
	escrow bool    // the Nodes run with Config.Escrow (mode hybrid-escrow)
	calm   float64 // the Nodes' Config.CalmShare (Env.CalmShare where it applies)
}

func runHybrid(ctx context.Context, e *Env) (*outcome, error) { return e.runHybrid(ctx, true) }

func runHybridNoGossip(ctx context.Context, e *Env) (*outcome, error) {
	return e.runHybrid(ctx, false)
}

// runHybrid plays the trace through one sync/hybrid Node per PoP in virtual
// time. Each PoP reconciles at its sync ticks (PoP p's first tick is at
// p/pops of an interval, so the PoPs do not tick in step) and, with gossip,
// then publishes its deltas through the real NATS; every message is applied
// at each other PoP at its send time plus the modelled one-way delay.
func (e *Env) runHybrid(ctx context.Context, withGossip bool) (*outcome, error) {
	s := &hybridSim{e: e, ctx: ctx, ids: map[string]int{}, out: newOutcome(len(e.Trace.Requests))}
	defer s.close()
	if err := s.open(withGossip); err != nil {
		return nil, err
	}
	for p := range s.pops {
		s.agenda.add(event{at: e.SyncInterval * time.Duration(p) / time.Duration(len(s.pops)), kind: evTick, pop: p})
	}
	for i, r := range e.Trace.Requests {
		if err := s.runUntil(r.At); err != nil {
			return nil, err
		}
		if err := s.decide(i, r.ID, int(r.PoP), int64(r.N)); err != nil {
			return nil, err
		}
		e.progress(i + 1)
	}
	s.tally()
	s.out.view = s.releaseViews()
	return s.out, nil
}

// open builds every PoP's Node.
func (s *hybridSim) open(withGossip bool) error {
	s.calm = s.e.calmShare(withGossip, s.escrow)
	for p := range s.e.Trace.Config.PoPs {
		client, trips := s.e.countedClient(4)
		pp := &pop{redis: client, trips: trips, clock: core.NewManualClock(s.e.Clock(p, 0))}
		s.pops = append(s.pops, pp)
		node, nc, err := s.newNode(p, withGossip)
		if err != nil {
			return err
		}
		pp.node, pp.nc = node, nc
		s.ids[node.ID()] = p
	}
	return nil
}

// newNode builds PoP p's Node (a new incarnation each time) on its Redis
// client and clock and, with gossip, its own NATS connection.
func (s *hybridSim) newNode(p int, withGossip bool) (*hybrid.Node, *nats.Conn, error) {
	pp := s.pops[p]
	var nc *nats.Conn
	if withGossip {
		var err error
		if nc, err = nats.Connect(s.e.NATSURL); err != nil {
			return nil, nil, &core.UnavailableError{Op: "nats connect", Err: err}
		}
	}
	node, err := hybrid.New(hybrid.Config{PoP: fmt.Sprintf("pop%d", p), Limit: s.e.Limit,
		Redis: pp.redis, NATS: nc, Namespace: s.e.Namespace, Margin: s.e.Margin, Escrow: s.escrow, Owners: s.e.owners(s.escrow), RedisClock: s.e.RedisClock,
		ManualGossip: true, PoPs: s.e.exposurePoPs(), CalmShare: s.calm, Clock: pp.clock, Capacity: s.e.capacity(), ExpirySlack: s.e.expirySlack()})
	if err != nil {
		if nc != nil {
			nc.Close()
		}
		return nil, nil, fmt.Errorf("hybrid node %d: %w", p, err)
	}
	return node, nc, nil
}

func (s *hybridSim) close() {
	if s.honest != nil && s.honest.redis != nil {
		s.honest.redis.close()
	}
	for _, p := range s.pops {
		if p.node != nil {
			p.node.Close(context.Background())
		}
		if p.nc != nil {
			p.nc.Close()
		}
		p.redis.Close()
	}
}

// now sets PoP p's clock to its reading at offset t of the trace (true
// time plus its skew) and returns it.
func (s *hybridSim) now(p int, t time.Duration) time.Time {
	now := s.e.Clock(p, t)
	s.pops[p].clock.Set(now)
	return now
}

// runUntil runs every tick and delivery due at or before t.
func (s *hybridSim) runUntil(t time.Duration) error {
	for {
		ev, ok := s.agenda.next(t)
		if !ok {
			return nil
		}
		var err error
		switch ev.kind {
		case evTick:
			err = s.tick(ev)
		case evDelivery:
			s.pops[ev.pop].node.ApplyGossip(ev.msg.(gossip.Message), s.now(ev.pop, ev.at))
		}
		if err != nil {
			return err
		}
	}
}

// decide asks PoP p's Node about request i and charges each Redis round
// trip the decision waited for its PoP's modelled round-trip time.
func (s *hybridSim) decide(i int, id int32, p int, n int64) error {
	ok, lat, err := s.allow(p, s.e.Key(id), s.e.Trace.Requests[i].At, n)
	if err != nil {
		return fmt.Errorf("hybrid decision %d at pop %d: %w", i, p, err)
	}
	s.out.allowed[i], s.out.latency[i] = ok, lat
	return nil
}

// allow asks PoP p's Node about n units of key at offset t of the trace (by
// the PoP's clock) and returns the decision and the latency it added: its
// Redis round trips times the PoP's modelled round-trip time.
func (s *hybridSim) allow(p int, key string, t time.Duration, n int64) (bool, time.Duration, error) {
	pp := s.pops[p]
	before := pp.trips.n.Load()
	d, err := pp.node.AllowN(s.ctx, key, s.now(p, t), n)
	if err != nil {
		return false, 0, err
	}
	return d.Allowed, time.Duration(pp.trips.n.Load()-before) * s.e.Net.RedisRTT[p], nil
}

// tally sums every PoP's round trips and gossip traffic.
func (s *hybridSim) tally() {
	for _, p := range s.pops {
		st := p.node.Stats()
		s.out.roundTrips += p.trips.n.Load()
		s.out.natsMsgs += int64(st.GossipSent)
		s.out.natsBytes += int64(st.GossipBytes)
	}
}
