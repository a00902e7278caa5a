package budget

import (
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
)

// Gossip tells the other PoPs what Redis said of identities over their
// limit, so they deny them without asking Redis in turn.
//
// What travels: when a Redis reply shows an identity's count C alone
// over its limit (absorb sets a deny-until from it), the next Gossip call
// names it with Redis' counts of its last two windows, one
// gossip.Entry{Key, Window, Count: C of that window} each (a window with
// C 0 is left out). Identities below their limit are never gossiped, so
// gossip follows the identities over their limit, not the traffic.
//
// What a receiver does (Hear): for an identity it holds a full entry of,
// it takes, for the window of its own now and the one before, the
// larger of the count heard and its own last count from Redis, and when
// the sliding estimate of those already leaves no room for a unit, denies
// the identity until it would (core.SlidingRetryMillis), as absorb does
// with its own replies. Nothing else of the view changes.
//
// Why it is safe: C only grows within a window, and counts what the PoPs
// admitted and reported, never more; so each count heard is a lower
// bound of what was admitted, and a denial from lower bounds is one pure
// Redis makes too. Merging by maximum makes a duplicated, reordered or
// stale message harmless, and a lost one costs only the round trip it
// would have saved (TestPropertyBudget judges every gossip denial). A
// Reset here is the one time C falls: heard counts of the identity's
// windows up to the one after the Reset's are then ignored (resetHeard).
// Messages of another window length, and this Machine's own, are ignored.
// That holds for counts PoPs sent: a message carries no proof, and one a
// client forged (a count up to gossip.MaxCount) denies an identity this PoP
// holds to the end of the window after its own at most
// (TestGossipForgedCountBound), so only PoPs may publish on the subject.

// ID is the Machine's sender name in gossip: its PoP, '#' and its
// incarnation in 16 hex digits, so a restarted PoP is a new sender.
func (m *Machine) ID() string { return m.id }

func senderID(c Config) string { return fmt.Sprintf("%s#%016x", c.PoP, c.Incarnation) }

// tell queues e for the next Gossip call.
func (m *Machine) tell(e *entry) {
	if !e.telling {
		e.telling = true
		m.told = append(m.told, e)
	}
}

// Gossip returns the message to publish now: Redis' counts of each
// identity absorb found over its limit since the last call (see the
// comment above Gossip's file), or false when there is none. It empties
// the queue.
func (m *Machine) Gossip(now int64) (gossip.Message, bool) {
	if len(m.told) == 0 {
		return gossip.Message{}, false
	}
	msg := gossip.Message{PoP: m.id, SentAt: time.UnixMilli(now), WindowMillis: m.w,
		Entries: make([]gossip.Entry, 0, 2*len(m.told))}
	for _, e := range m.told {
		e.telling = false
		if e.lowC > 0 {
			msg.Entries = append(msg.Entries, gossip.Entry{Key: e.key, Window: e.lowW, Count: e.lowC})
		}
		if e.lowPrev > 0 {
			msg.Entries = append(msg.Entries, gossip.Entry{Key: e.key, Window: e.lowW - 1, Count: e.lowPrev})
		}
	}
	clear(m.told)
	m.told = m.told[:0]
	m.stats.GossipSent++
	return msg, len(msg.Entries) > 0
}

// Hear applies gossip message msg at now (this PoP's clock): see the
// comment above Gossip's file. Its own messages, and messages of another
// window length, change nothing.
func (m *Machine) Hear(now int64, msg gossip.Message) {
	if msg.PoP == m.id || msg.WindowMillis != m.w {
		return
	}
	rnow := now + m.redis.ahead() // Redis' time, or later (redisclock.go)
	x := m.window(rnow)
	es := msg.Entries
	for i := 0; i < len(es); {
		j := i + 1
		for j < len(es) && es[j].Key == es[i].Key {
			j++
		}
		if e := m.view[es[i].Key]; e != nil {
			m.hear(now, rnow, x, e, es[i:j])
		}
		i = j
	}
}

// resetHeard records that key's Reset, planned at Redis' window x (the
// Reset's time on this PoP's clock plus redis.ahead, as hear reads heard
// counts: a PoP behind Redis by more than a window otherwise heard counts
// of Redis' window at the Reset), was applied: a message heard later may still carry counts from
// before it (a copy buffered through a reconnection, a slow route), which
// would deny what Redis, counting from 0, admits. Heard counts of windows
// up to x+1 (Redis' window may be the next one near a boundary) are
// ignored for key until they stop mattering (hear); that only drops
// denials. The records of windows before x−1 are dropped once the map
// doubles, so it holds the Resets of the last two windows and at most as
// many stale ones.
func (m *Machine) resetHeard(key string, x int64) {
	if m.resetX == nil {
		m.resetX = map[string]int64{}
	}
	m.resetX[key] = max(m.resetX[key], x+1)
	if len(m.resetX) < max(64, m.resetPrune) {
		return
	}
	for k, rx := range m.resetX {
		if rx < x-1 {
			delete(m.resetX, k)
		}
	}
	m.resetPrune = 2 * len(m.resetX)
}

// hear merges one identity's heard counts with its own lower bounds for
// window x and x−1 and denies it while they leave no room. Counts of
// windows a Reset of the identity here may postdate are not heard
// (resetHeard). Counts are weighed at rnow, Redis' time as estimated
// (redisclock.go; x its window), and the denial lasts until now, this
// PoP's time, plus Redis' wait.
func (m *Machine) hear(now, rnow, x int64, e *entry, es []gossip.Entry) {
	var cw, cprev int64
	rx, reset := m.resetX[e.key]
	if reset && rx < x-1 {
		delete(m.resetX, e.key) // every window hear reads is past the Reset
		reset = false
	}
	for _, g := range es {
		if reset && g.Window <= rx {
			continue
		}
		switch g.Window {
		case x:
			cw = max(cw, g.Count)
		case x - 1:
			cprev = max(cprev, g.Count)
		}
	}
	switch e.lowW {
	case x:
		cw, cprev = max(cw, e.lowC), max(cprev, e.lowPrev)
	case x - 1:
		cprev = max(cprev, e.lowC)
	}
	elapsed := rnow - x*m.w
	if cw+cprev == 0 || core.SlidingAdmits(core.SlidingEstimate(cw, cprev, elapsed, m.w), m.cfg.Limit.Max, 1) {
		return
	}
	until := now + core.SlidingRetryMillis(cw, cprev, elapsed, m.w, m.cfg.Limit.Max, 1)
	if until > e.denyUntil {
		e.denyUntil = until
		m.stats.GossipDenies++
	}
}
