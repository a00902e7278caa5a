package hybrid

import (
	"context"
	"slices"
	"strings"
	"time"
)

// Flush sends Redis, at now, every own count it has not acknowledged: a
// Sync that also carries the identities Config.CalmShare kept out of Redis
// and those a full pending set dropped (Stats.PendingDropped), without
// Sync's pauses (a shutdown deadline must not expire in one). Close makes
// it; so should a driver that stops the Node's traffic for good. Errors as
// Sync's.
func (n *Node) Flush(ctx context.Context, now time.Time) error {
	n.queueUnacked(n.ms(now))
	return n.sync(ctx, now, false)
}

// queueUnacked queues for Redis every identity, cached or parked, holding
// own units Redis has not acknowledged in its live windows at now (ms), in
// key order (as maybeResendAll, so a simulator replays the batches).
func (n *Node) queueUnacked(now int64) {
	idx, _ := n.position(now)
	all := append(n.cache.Values(), n.parkedEntries()...)
	unacked := all[:0]
	for _, e := range all {
		e.mu.Lock()
		e.roll(idx)
		if e.own[0] > e.acked[0] || e.own[1] > e.acked[1] {
			unacked = append(unacked, e)
		}
		e.mu.Unlock()
	}
	clear(all[len(unacked):])
	slices.SortFunc(unacked, func(a, b *entry) int { return strings.Compare(a.key, b.key) })
	for _, e := range unacked {
		n.enqueue(e, true, false)
	}
}
