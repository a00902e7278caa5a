// Package hybrid is the local-first limiter a PoP runs: it decides from an
// in-process LRU view of every identity's global sliding-window counts, with
// no network call on the hot path, reconciles with Redis in batches (package
// reconcile) and gossips its own counts over NATS (package gossip).
//
// Counting model: for every (identity, window index) the global count is a
// grow-only counter made of one cumulative count per PoP counter id (the
// PoP's name plus a random incarnation chosen by New, so a restarted process
// never reuses an old field). A PoP only ever increases its own field;
// gossip carries a PoP's own cumulative counts; Redis stores one hash field
// per PoP counter, written by max-merge in the same Lua scripts; a view
// merges every source by maximum per PoP. The estimate is the sum over PoPs
// of the current and previous windows, fed to core's sliding math. Every
// field is a true count of that PoP's admitted units (the two cases where
// it falls behind are below), so the view is never above the truth, and
// duplicated, reordered or lost messages change nothing (the next
// reconcile repairs a loss). Each Redis field is written only by its own
// PoP (a Redis-decided request weighs the caller's view of the others in
// the estimate without writing it).
//
// Own counts survive the view's LRU: an identity evicted (its LRU shard
// full, see Capacity) while it holds own counts in live windows is parked,
// at most MaxPending of them, and revived when seen again, so this PoP's
// field goes on from its true value; Sync drops parked identities once their
// counts leave the live windows. Beyond that bound the identity's own counts
// are forgotten and counted in Stats.EvictedWithCounts: its field restarts
// from 0 here, the max-merge at Redis and in other views hides the new units
// under the old value, and this PoP may admit up to that many units of it
// again in those windows. Gossip about an identity whose view shard is full
// is ignored rather than evict one holding own counts (Stats.GossipSkipped).
//
// Windows follow the clock of the request: gossip from a PoP whose clock is
// just ahead (within one window) may roll an identity's view on, but this
// PoP's own admitted units, local or Redis-decided, are still counted, sent
// and decided in the window of the request that admitted them. A request
// two or more windows behind the view (a clock stepping back, or times
// handed out of order) is decided against the view's newest window and its
// units are not kept: harmless for this PoP's decisions (that window no
// longer weighs in any estimate the view makes), but Redis then holds fewer
// of this PoP's units of that window than it admitted, and a PoP (or an
// audit) still reading that window counts fewer.
//
// Gossip cap: what gossip alone makes a PoP believe is bounded. For one
// identity in one window, what the view counts above what Redis last
// reported, summed over every sender, is at most Config.GossipCap ×
// Limit.Max units; a claim beyond it is ignored and counted in
// Stats.GossipClamped. The bound is per identity, not per sender, since
// sender ids cost nothing to invent; a view also tracks at most MaxPeers
// PoP counters per identity (others are ignored and counted in
// Stats.PeersDropped; a counter Redis reports displaces one known only by
// gossip). The correct PoPs together admit about Limit.Max units of an
// identity per window, so the default cap (1) clamps correct peers only
// once gossip alone already puts the window at the limit, and stops absurd
// counts. Gossip never reaches Redis, so a lie stays in the views of the
// PoPs that heard it and leaves with its windows: beyond what they wrote to
// Redis themselves, compromised or buggy PoPs, however many and under
// whatever ids, can raise an identity's sliding estimate at a PoP that
// hears them by at most f × Limit.Max per window, hence by at most 2 × f ×
// Limit.Max (the estimate weighs the current window and part of the
// previous one), f being GossipCap. With f < 1/2 every identity keeps at
// least (1 − 2f) × Max units of budget everywhere, at the price of
// under-counting correct peers' not yet reconciled hits beyond f × Max per
// window in total.
//
// Headroom decides where a request is decided: far below the limit, locally
// (core.SourceLocal); within Margin of it, atomically at Redis in one round
// trip (core.SourceRedis); over it, denied from the view
// (core.SourceCachedDeny) until the window rolls. Decisions carry
// Staleness: the age of the last Redis refresh of the identity's view.
//
// Outage: a request within the margin that cannot reach Redis (it fails,
// times out, or failed less than RedisRetry ago) is decided from the view
// as it is then, not as it was before the wait (denied with FailClosed):
// admitted while the estimate after its units stays within the limit, and
// counted in the view under the identity's lock before the next caller
// looks, so the callers that waited on Redis together see each other's
// units. One PoP thus admits at most Limit.Max units of an identity per
// window while Redis is out, and P PoPs cut from Redis at most P ×
// Limit.Max at worst, less as gossip tells each the others' units. The
// decision comes with a *core.UnavailableError (Stats.FallbackLocal,
// Stats.FallbackDenied).
//
// Escrowed allowances (Config.Escrow, experimental) take the round trip
// out of the margin. Invariant, kept by lua/hybrid_escrow.lua at Redis: for
// every identity, the global sliding estimate E of the counts Redis holds
// plus every PoP's outstanding allowance (units it may admit without
// asking) stays below Limit.Max + 1 when a grant is made: each of those
// units, admitted one after the other then, would pass the article's rule
// (estimate below the limit) that a Redis-decided request meets. E never grows
// without an admission (the previous window's weight only decays, and the
// roll is continuous), and an admission of w units adds at most w to it, so
// a grant made at one instant stays safe at every later one: units a PoP
// admits from its allowance were already counted, at full weight, when it
// was granted. A Sync reports the units admitted since the last one (its
// field's growth) and Redis takes them out of the PoP's allowance before
// granting more (up to twice the PoP's demand within the margin since its
// last Sync). A grant lasts Config.Lease; the PoP stops spending it then,
// and Redis counts it one lease longer, so what was spent just before the
// expiry is reported before the headroom is granted again; a crashed PoP's
// unspent allowance thus only causes denials, for at most two leases.
// What the invariant does not cover: units admitted below the margin (the
// far-below rule decides on the view, as without escrow) that Redis has
// not heard of yet; units a PoP admitted and never reported (a crash, the
// same loss as without escrow, or a partition longer than a lease); and
// clocks that disagree by more than a lease (Redis prunes expired grants
// by the calling PoP's clock). Within the margin a request is admitted from
// the allowance or denied locally (Stats.EscrowDenies) and its identity
// queued so the next Sync asks for one; no decision waits for Redis.
//
// Sole holders (with Config.Escrow, and with Config.Owners in the margin
// hybrid): a PoP that asks for an identity while no other PoP holds or
// asks for an allowance, and no other PoP has counted it in the live
// windows (an identity pinned to one PoP, as anycast makes most), becomes
// its owner (Stats.EscrowOwned counts its admissions within the margin):
// it decides by the article's rule on its own view, exact for its own
// counts, as a lone limiter would, and Redis grants the others nothing
// meanwhile, so the invariant above holds with the owner's view in place
// of a fixed allowance. When another PoP asks, the owner's next Sync
// releases it; Redis keeps the others out until a Sync of the owner read
// after the releasing reply reached it reports what it admitted meanwhile
// (the Node queues that Sync, past MaxPending if need be; each batch tells
// Redis whether the PoP believed it owned the identity when it read it, so
// a lost reply or two Syncs in flight cannot end the release early). An
// owner over its limit admits nothing that would
// carry the identity to Redis, so past half its lease a denial queues it
// to renew ownership. With Owners, a request within the margin at a PoP
// that does not own the identity is decided at Redis as without it, by
// hybrid_decide.lua reading the allowance hash too: it denies while
// another PoP owns or releases the identity (recording that this PoP
// asked, so the owner releases it) and leaves out units other PoPs hold;
// and when the view knows of no other PoP's count, the identity is queued
// so the next Sync asks to own it. Outside the invariant, besides what
// escrow leaves out: PoP clocks that disagree by more than a lease (a PoP
// ahead reads the owner's record as expired; run with RedisClock), and a
// Redis that lost the allowance hash (a restart, a failover) while an
// owner held it, until the owner's next reply; and an owner whose view
// evicted the identity with nowhere to park it (Stats.EvictedWithCounts),
// which undercounts itself by what it forgot.
//
// Live accuracy: with Config.AuditRate set, a sampled fraction of local
// decisions is checked off the hot path against the Redis hashes (Audit),
// and agreements and false allows / false denies are counted in Stats.
//
// Drive it by hand (Sync, Gossip, TakeGossip, ApplyGossip, Audit with explicit
// times, as the simulator does) or with Start's background loops; the same
// code runs either way.
package hybrid
