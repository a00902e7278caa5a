package hybrid

import (
	"context"
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
// own units Redis has not acknowledged in its live windows at now (ms).
func (n *Node) queueUnacked(now int64) {
	n.queueWhere(now, func(e *entry) bool { return e.own[0] > e.acked[0] || e.own[1] > e.acked[1] })
}
