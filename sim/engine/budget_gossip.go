package engine

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/edgelimit/edgelimit/sync/gossip"
	"github.com/nats-io/nats.go"
)

// budgetGossip carries the budget Machines' gossip through the real NATS:
// one connection per PoP (no echo of its own messages), subscribed as a
// Limiter with UseNATS is (budget.Transport), whose payloads wait in the
// PoP's inbox until the simulator schedules them at their modelled
// arrival (see relay).
type budgetGossip struct {
	conns []*nats.Conn
	trs   []*gossip.Transport
	inbox []chan []byte
}

// openBudgetGossip connects every PoP of e, one Machine of ms each, to
// its NATS server, on the subject of its Machine's Keyspace as UseNATS
// subscribes a Limiter.
func openBudgetGossip(e *Env, ms []*budget.Machine) (*budgetGossip, error) {
	g := &budgetGossip{}
	for _, m := range ms {
		nc, err := nats.Connect(e.NATSURL, nats.NoEcho())
		if err != nil {
			g.close()
			return nil, &core.UnavailableError{Op: "nats connect", Err: err}
		}
		tr := budget.Transport(nc, m.Keyspace())
		in := make(chan []byte, 1<<12)
		if _, err := tr.Subscribe(func(p []byte) { in <- append([]byte(nil), p...) }); err != nil {
			nc.Close()
			g.close()
			return nil, err
		}
		if err := nc.Flush(); err != nil { // the subscription is in place before anyone publishes
			nc.Close()
			g.close()
			return nil, &core.UnavailableError{Op: "nats flush", Err: err}
		}
		g.conns, g.trs, g.inbox = append(g.conns, nc), append(g.trs, tr), append(g.inbox, in)
	}
	return g, nil
}

func (g *budgetGossip) close() {
	for _, nc := range g.conns {
		nc.Close()
	}
}

// gossip publishes PoP p's gossip at at (its Machine's Gossip, as a
// Limiter's Sync does), then takes each payload off every other PoP's
// subscription (waiting on its inbox, never a fixed time) and schedules
// it there one drawn PoP-to-PoP delay later (relay).
func (s *budgetSim) gossip(p int, at time.Duration) error {
	msg, ok := s.ms[p].Gossip(s.clock(p, at))
	if !ok || s.nats == nil {
		return nil
	}
	payloads, err := gossip.Encode(msg, 64<<10)
	if err != nil {
		return fmt.Errorf("budget gossip of pop %d: %w", p, err)
	}
	for _, b := range payloads {
		if err := s.nats.trs[p].Publish(b); err != nil {
			return fmt.Errorf("budget gossip of pop %d: %w", p, err)
		}
		s.out.natsMsgs++
		s.out.natsBytes += int64(len(b))
	}
	if err := s.nats.conns[p].Flush(); err != nil {
		return &core.UnavailableError{Op: "nats flush", Err: err}
	}
	for q, in := range s.nats.inbox {
		for i := 0; q != p && i < len(payloads); i++ {
			select {
			case b := <-in:
				m, err := gossip.Decode(b)
				if err != nil || m.PoP != msg.PoP {
					return fmt.Errorf("pop %d got gossip %q (%v) while waiting for pop %d's", q, m.PoP, err, p)
				}
				s.relay(p, q, at, m)
			case <-time.After(gossipWait):
				return fmt.Errorf("budget gossip from pop %d: %d of %d payloads reached pop %d", p, i, len(payloads), q)
			}
		}
	}
	return nil
}

// relay schedules one copy of message m from PoP from to PoP to, sent at
// at: lost by chance or when either end is partitioned at its end of the
// trip, delivered twice by chance.
func (s *budgetSim) relay(from, to int, at time.Duration, m gossip.Message) {
	copies := 1
	if s.links.Chance(s.faults.GossipDup) {
		copies = 2
	}
	for range copies {
		arrive := at + s.links.Peer(from, to)
		if s.links.Chance(s.faults.GossipLoss) || s.faults.Cut(from, at) || s.faults.Cut(to, arrive) {
			continue
		}
		s.agenda.add(event{at: arrive, kind: evDelivery, pop: to, msg: m})
	}
}
