package hybrid

import (
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/gossip"
)

// Gossip publishes, at now, this PoP's cumulative counts of every identity
// admitted since the last Gossip, many identities per payload (at most
// GossipBytes each). With no NATS connection it does nothing. On a publish
// failure (connection closed or its reconnect buffer full) the identities
// stay pending and a *core.UnavailableError is returned.
func (n *Node) Gossip(now time.Time) error {
	if n.tr == nil {
		return nil
	}
	pending := n.take(false)
	if len(pending) == 0 {
		return nil
	}
	m := gossip.Message{PoP: n.id, SentAt: now, WindowMillis: n.w, Entries: n.gossipEntries(pending, now)}
	payloads, err := gossip.Encode(m, n.cfg.GossipBytes)
	if err != nil {
		return err
	}
	for _, p := range payloads {
		if err := n.tr.Publish(p); err != nil {
			n.st.gossipErrors.Add(1)
			n.requeueGossip(pending)
			return err
		}
		n.st.gossipSent.Add(1)
		n.st.gossipBytes.Add(uint64(len(p)))
	}
	return nil
}

func (n *Node) gossipEntries(pending []*entry, now time.Time) []gossip.Entry {
	idx, _ := n.position(n.ms(now))
	out := make([]gossip.Entry, 0, 2*len(pending))
	for _, e := range pending {
		e.mu.Lock()
		e.roll(idx)
		for s := 0; s < 2; s++ {
			if e.own[s] > 0 {
				out = append(out, gossip.Entry{Key: e.key, Window: e.idx - int64(s), Count: e.own[s]})
			}
		}
		e.mu.Unlock()
	}
	return out
}

func (n *Node) requeueGossip(es []*entry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, e := range es {
		n.queue(&n.gossipPending, e, &e.queuedGossip)
	}
}

// receive handles one payload from NATS: malformed ones and those of
// another window length are dropped and counted; this PoP's own are
// ignored; the rest are applied now or, with ManualGossip, queued.
func (n *Node) receive(payload []byte) {
	m, err := gossip.Decode(payload)
	if err != nil || m.WindowMillis != n.w {
		n.st.gossipDropped.Add(1)
		return
	}
	if m.PoP == n.id {
		return
	}
	if !n.cfg.ManualGossip {
		n.ApplyGossip(m, n.cfg.Clock.Now())
		// Counted once applied, so a reader that saw the count sees the
		// message in the view.
		n.st.gossipRecv.Add(1)
		return
	}
	n.st.gossipRecv.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.inbox) >= maxInbox {
		n.st.gossipDropped.Add(1)
		return
	}
	n.inbox = append(n.inbox, m)
}

// TakeGossip drains the messages received since the last call (only with
// ManualGossip; otherwise they were applied on arrival and it returns nil).
func (n *Node) TakeGossip() []gossip.Message {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.inbox
	n.inbox = nil
	return out
}

// ApplyGossip merges m into the view at now by maximum per PoP: applying a
// message twice, or an older one after a newer one, changes nothing. What
// gossip makes the view count for one identity in one window above what
// Redis last reported, summed over every sender, is at most the gossip cap
// (Config.GossipCap × Limit.Max); a claim beyond it is ignored and the
// entry counted in Stats.GossipClamped. A sender beyond the MaxPeers an
// identity's view tracks, or new once the Node has met 2^20 counter ids
// (only a hostile sender inventing ids gets there), is ignored
// (Stats.PeersDropped). An identity not
// in the view is added unless the view is full and that would evict an
// entry holding this PoP's own counts (then the entry is ignored and
// counted in Stats.GossipSkipped).
// Messages from this Node, of another window length, and entries more than
// one window ahead of now (a clock far ahead) are ignored.
func (n *Node) ApplyGossip(m gossip.Message, now time.Time) {
	if m.PoP == n.id || m.WindowMillis != n.w {
		return
	}
	ms := n.ms(now)
	idx, _ := n.position(ms)
	from, ok := n.peerIDs.of(m.PoP)
	if !ok {
		n.st.peersDropped.Add(1)
		return
	}
	valid, found := n.gossipEntriesHeld(m.Entries, idx)
	for i, j := range valid {
		g := m.Entries[j]
		e := found[i]
		if e == nil {
			e = n.entry(g.Key, ms, true)
		}
		if e != nil {
			e = n.lockLive(e, ms, true)
		}
		if e == nil {
			continue
		}
		clamped, dropped := e.mergeGossip(from, g.Window, g.Count, n.gossipCap)
		e.mu.Unlock()
		if clamped {
			n.st.gossipClamped.Add(1)
		}
		if dropped {
			n.st.peersDropped.Add(1)
		}
	}
}

// gossipEntriesHeld returns the indexes in es of the entries ApplyGossip
// takes at window idx (a valid key, a window within one of idx), and for
// each the view's entry of its key (nil when not held), all looked up at
// once (viewLRU.TouchAll: a large view's lookups are cache misses, which
// overlap there).
func (n *Node) gossipEntriesHeld(es []gossip.Entry, idx int64) (valid []int, found []*entry) {
	valid = make([]int, 0, len(es))
	keys := make([]string, 0, len(es))
	for j, g := range es {
		if g.Window > idx+1 || g.Window < idx-1 || core.ValidateKey(g.Key) != nil {
			continue
		}
		valid, keys = append(valid, j), append(keys, g.Key)
	}
	found = make([]*entry, len(keys))
	n.cache.TouchAll(keys, found)
	return valid, found
}
