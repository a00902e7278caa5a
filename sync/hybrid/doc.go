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
// field is a true count of that PoP's admitted units, so the view is never
// above the truth, and duplicated, reordered or lost messages change
// nothing (the next reconcile repairs a loss). Each Redis field is written
// only by its own PoP (a Redis-decided request weighs the caller's view of
// the others in the estimate without writing it).
//
// Gossip cap: what gossip alone makes a PoP believe is bounded. A sender's
// count of one identity in one window raises the view by at most
// Config.GossipCap × Limit.Max units above what Redis last reported for the
// sender's field; the excess is ignored and counted in Stats.GossipClamped.
// A correct PoP never counts more than Limit.Max units of one identity in
// one window, so the default cap (1, "the sender's plausible count") never
// clamps a correct peer and stops absurd counts. Gossip never reaches Redis,
// so a lie stays in the views of the PoPs that heard it and leaves with its
// windows: beyond what it wrote to Redis itself, a compromised or buggy PoP
// can raise an identity's sliding estimate at a PoP that hears it by at
// most f × Limit.Max per window, hence by less than 2 × f × Limit.Max (the
// estimate weighs the current window and part of the previous one), f being
// GossipCap. With f < 1/2 every identity keeps more than (1 − 2f) × Max
// units of budget everywhere, at the price of under-counting a correct
// peer's not yet reconciled hits beyond f × Max per window.
//
// Headroom decides where a request is decided: far below the limit, locally
// (core.SourceLocal); within Margin of it, atomically at Redis in one round
// trip (core.SourceRedis); over it, denied from the view
// (core.SourceCachedDeny) until the window rolls. Decisions carry
// Staleness: the age of the last Redis refresh of the identity's view.
//
// Live accuracy: with Config.AuditRate set, a sampled fraction of local
// decisions is checked off the hot path against the Redis hashes (Audit),
// and agreements and false allows / false denies are counted in Stats.
//
// Drive it by hand (Sync, Gossip, TakeGossip, ApplyGossip, Audit with explicit
// times, as the simulator does) or with Start's background loops; the same
// code runs either way.
package hybrid
