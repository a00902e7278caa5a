package engine

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/sync/gossip"
)

// gossipWait bounds how long a published batch may take to reach every
// PoP through NATS before the run fails.
const gossipWait = 10 * time.Second

// tick reconciles PoP ev.pop with Redis, publishes its gossip, waits until
// every other PoP has really received it, schedules each copy's delivery at
// its modelled arrival, and schedules the PoP's next tick.
func (s *hybridSim) tick(ev event) error {
	p := s.pops[ev.pop]
	now := s.now(ev.pop, ev.at)
	if err := p.node.Sync(s.ctx, now); err != nil {
		return fmt.Errorf("sync at pop %d: %w", ev.pop, err)
	}
	if err := s.publish(ev.pop, ev.at); err != nil {
		return err
	}
	if next := ev.at + s.e.SyncInterval; next < s.e.Trace.Duration {
		s.agenda.add(event{at: next, kind: evTick, pop: ev.pop})
	}
	return nil
}

// publish has PoP p Gossip at offset at and schedules each copy of what it
// sent at every other PoP (see collect); without NATS it does nothing.
func (s *hybridSim) publish(p int, at time.Duration) error {
	pp := s.pops[p]
	if pp.nc == nil {
		return nil
	}
	before := pp.node.Stats().GossipSent
	if err := pp.node.Gossip(s.now(p, at)); err != nil {
		return fmt.Errorf("gossip at pop %d: %w", p, err)
	}
	if sent := int(pp.node.Stats().GossipSent - before); sent > 0 {
		return s.collect(event{at: at, pop: p}, sent)
	}
	return nil
}

// collect waits until each PoP other than the sender has taken sent
// messages from it off NATS (counting them, never sleeping a fixed time),
// and schedules each at its arrival (see deliver).
func (s *hybridSim) collect(ev event, sent int) error {
	deadline := time.Now().Add(gossipWait)
	for q, p := range s.pops {
		got := 0
		for q != ev.pop && got < sent {
			for _, m := range p.node.TakeGossip() {
				if from, ok := s.ids[m.PoP]; !ok || from != ev.pop {
					return fmt.Errorf("pop %d got gossip from %q while waiting for pop %d", q, m.PoP, ev.pop)
				}
				s.deliver(ev.pop, q, ev.at, m)
				got++
			}
			if got < sent && time.Now().After(deadline) {
				return fmt.Errorf("gossip from pop %d: %d of %d messages reached pop %d", ev.pop, got, sent, q)
			}
			if got < sent {
				time.Sleep(20 * time.Microsecond)
			}
		}
	}
	return nil
}

// deliver schedules gossip message m, sent by PoP from at at, at PoP to:
// on the ideal network at the link's fixed one-way delay; on the honest
// one (honest.deliver) with a drawn delay, lost or duplicated by chance,
// and lost when either end is partitioned.
func (s *hybridSim) deliver(from, to int, at time.Duration, m gossip.Message) {
	if s.honest != nil {
		s.honest.deliver(from, to, at, m)
		return
	}
	s.agenda.add(event{at: at + s.e.Net.OneWay[from][to], kind: evDelivery, pop: to, msg: m})
}
