package netmodel

import (
	"math/rand/v2"
	"time"
)

// Links draws the one-way delay of every message of a run: a link's base
// delay (half the PoP's round trip to Redis, each way; the ring's delay
// between two PoPs) plus a jitter drawn from an exponential distribution
// of mean Jitter × base, so two messages on one link may arrive in the
// other order than they were sent (as TigerBeetle's VOPR models a
// network). Draws come from one generator seeded at NewLinks: the same
// seed and the same sequence of calls give the same delays. A Links is not
// safe for concurrent use; the simulator's event loop is its only caller.
type Links struct {
	m      Model
	jitter float64
	rng    *rand.Rand
}

// NewLinks returns the links of m with the given jitter (a fraction of
// each base delay; 0 or less: none) and seed.
func NewLinks(m Model, jitter float64, seed uint64) *Links {
	return &Links{m: m, jitter: max(jitter, 0), rng: rand.New(rand.NewPCG(seed, 0x11e7_0de1a7))}
}

// Up is the delay of a call from PoP p to Redis.
func (l *Links) Up(p int) time.Duration { return l.draw(l.m.RedisRTT[p] / 2) }

// Down is the delay of a reply from Redis to PoP p.
func (l *Links) Down(p int) time.Duration { return l.draw(l.m.RedisRTT[p] - l.m.RedisRTT[p]/2) }

// Peer is the delay of a gossip message from PoP p to PoP q.
func (l *Links) Peer(p, q int) time.Duration { return l.draw(l.m.OneWay[p][q]) }

// Chance reports true with probability prob (never for prob ≤ 0).
func (l *Links) Chance(prob float64) bool { return prob > 0 && l.rng.Float64() < prob }

// draw is base plus the jitter: base × Jitter × an Exp(1) draw.
func (l *Links) draw(base time.Duration) time.Duration {
	if l.jitter == 0 || base <= 0 {
		return base
	}
	return base + time.Duration(float64(base)*l.jitter*l.rng.ExpFloat64())
}
