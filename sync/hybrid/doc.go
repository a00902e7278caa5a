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
// nothing (the next reconcile repairs a loss).
//
// Headroom decides where a request is decided: far below the limit, locally
// (core.SourceLocal); within Margin of it, atomically at Redis in one round
// trip (core.SourceRedis); over it, denied from the view
// (core.SourceCachedDeny) until the window rolls. Decisions carry
// Staleness: the age of the last Redis refresh of the identity's view.
//
// Drive it by hand (Sync, Gossip, TakeGossip, ApplyGossip with explicit
// times, as the simulator does) or with Start's background loops; the same
// code runs either way.
package hybrid
