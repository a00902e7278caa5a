package hybrid

import "sync/atomic"

// Stats are a Node's counters since New. All only grow, except the
// Pending and Parked gauges.
type Stats struct {
	LocalDecisions  uint64 // decided from the view, no network call (allowed)
	CachedDenies    uint64 // denied from the view's over-limit state
	EscrowDenies    uint64 // denied within the margin for want of an escrowed allowance (Config.Escrow)
	EscrowOwned     uint64 // admitted within the margin as the identity's sole holder (Config.Escrow; see reconcile.Grant)
	RedisDecisions  uint64 // decided atomically at Redis
	FallbackLocal   uint64 // Redis-decided requests admitted locally because Redis was unreachable
	FallbackDenied  uint64 // Redis-decided requests denied from the view because Redis was unreachable and the units no longer fit
	FailClosed      uint64 // Redis-decided requests denied because Redis was unreachable
	RedisRoundTrips uint64 // script calls (decide) and batches (reconcile: one master each on a cluster) sent to Redis; the EVAL retry after NOSCRIPT is not counted
	RedisErrors     uint64 // of those, failed
	Resends         uint64 // full re-sends of own counts (Redis lost data, errors, anti-entropy)
	PendingDropped  uint64 // identities not queued because MaxPending was reached
	GossipSent      uint64 // gossip payloads published
	GossipBytes     uint64 // bytes of those payloads
	GossipReceived  uint64 // valid payloads received from other PoPs, counted once applied to the view (with ManualGossip, once queued)
	GossipDropped   uint64 // payloads dropped: malformed, other window length, inbox full
	GossipClamped   uint64 // gossip entries whose count exceeded the gossip cap (excess ignored)
	GossipSkipped   uint64 // gossip entries about identities not in a full view, ignored so as not to evict one holding own counts
	PeersDropped    uint64 // counts of a PoP counter ignored because the identity's view already tracked MaxPeers others
	GossipErrors    uint64 // publishes that failed (connection closed, buffer full)

	// EvictedWithCounts counts identities evicted from the view (Capacity)
	// while holding own counts that could not be parked, MaxPending being
	// parked already: their own counts are forgotten, so this PoP may admit
	// up to that many units of them again in those windows.
	EvictedWithCounts uint64

	PendingRedis  uint64 // gauge: identities with hits not yet sent to Redis
	PendingGossip uint64 // gauge: identities with hits not yet gossiped
	Parked        uint64 // gauge: identities evicted from the view but kept for their own counts (at most MaxPending)
	// RedisDown is a gauge: the Redis nodes (the one Redis, or cluster
	// masters) whose last call failed less than RedisRetry ago by the
	// Clock, each failed Sync or decision renewing it; 0 while Redis
	// answers. An outage shows here in every mode, Escrow included, where
	// no decision waits for Redis and none reports its failure.
	RedisDown uint64

	// Live accuracy (Config.AuditRate, Node.Audit); disagreements are
	// AuditFalseAllows + AuditFalseDenies out of AuditChecked.
	AuditChecked     uint64 // sampled local decisions checked against Redis
	AuditFalseAllows uint64 // of those, allowed here but denied by Redis' counts
	AuditFalseDenies uint64 // of those, denied here but allowed by Redis' counts
	AuditDropped     uint64 // samples not checked: queue full, window ended first, or their read failed
	AuditRoundTrips  uint64 // read-only audit pipelines sent to Redis (not in RedisRoundTrips)
	AuditErrors      uint64 // of those, failed
}

type stats struct {
	local, cachedDeny, redis, fallback, failClosed     atomic.Uint64
	fallbackDenied                                     atomic.Uint64
	escrowDenies, escrowOwned                          atomic.Uint64
	roundTrips, redisErrors, resends, pendingDropped   atomic.Uint64
	gossipSent, gossipBytes, gossipRecv, gossipDropped atomic.Uint64
	gossipErrors, gossipClamped                        atomic.Uint64
	evictedWithCounts, gossipSkipped, peersDropped     atomic.Uint64
	auditChecked, auditFalseAllows, auditFalseDenies   atomic.Uint64
	auditDropped, auditRoundTrips, auditErrors         atomic.Uint64
}

func (s *stats) snapshot() Stats {
	return Stats{
		LocalDecisions: s.local.Load(), CachedDenies: s.cachedDeny.Load(), EscrowDenies: s.escrowDenies.Load(),
		EscrowOwned:    s.escrowOwned.Load(),
		RedisDecisions: s.redis.Load(), FallbackLocal: s.fallback.Load(), FallbackDenied: s.fallbackDenied.Load(),
		FailClosed: s.failClosed.Load(), RedisRoundTrips: s.roundTrips.Load(),
		RedisErrors: s.redisErrors.Load(), Resends: s.resends.Load(),
		PendingDropped: s.pendingDropped.Load(), GossipSent: s.gossipSent.Load(),
		GossipBytes: s.gossipBytes.Load(), GossipReceived: s.gossipRecv.Load(),
		GossipDropped: s.gossipDropped.Load(), GossipErrors: s.gossipErrors.Load(),
		GossipClamped: s.gossipClamped.Load(), GossipSkipped: s.gossipSkipped.Load(),
		PeersDropped: s.peersDropped.Load(), EvictedWithCounts: s.evictedWithCounts.Load(),
		AuditChecked: s.auditChecked.Load(), AuditFalseAllows: s.auditFalseAllows.Load(),
		AuditFalseDenies: s.auditFalseDenies.Load(), AuditDropped: s.auditDropped.Load(),
		AuditRoundTrips: s.auditRoundTrips.Load(), AuditErrors: s.auditErrors.Load(),
	}
}
