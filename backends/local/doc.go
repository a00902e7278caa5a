// Package local is edgelimit's in-process limiter: every identity's state
// lives in this process, in a sharded, bounded LRU built on
// github.com/hashicorp/golang-lru/v2, and every decision is made by the pure
// math of package core, so it gives the same answers as the Redis backend for
// the same history (but see below for a clock that went back more than a
// state's lifetime).
//
// It is the fast path of a single node: a decision on a key already held takes one shard lock,
// one map lookup and no allocation. A key of up to 32 bytes is stored inside
// the slot that holds its state, so the lookup's key comparison brings in
// the state's cache line, or the one beside it. The state is changed in place; the key
// moves to the front of its LRU only when an eighth of its shard's capacity
// in new keys arrived since it last moved there, which forgets no identity
// an exact LRU would keep while it is used at least once per 7/8 of a
// shard's capacity in new arrivals.
//
// Memory is bounded by WithCapacity. When a shard is full the least recently
// used identity is forgotten, and forgetting an identity that still holds
// counts can admit it wrongly afterwards (Evictions counts such losses).
// Identities whose state has fully reset are dropped for free: each insert of
// a new identity first removes up to two such identities from the LRU's
// tail, so idle identities neither pin memory nor cause counted evictions.
// Capacity and LRU order are per shard (capacity is split evenly), so the
// identity forgotten is the least recently used of its shard, not of all.
//
// A clock that went back: a request stamped before an identity's state is
// counted in that state, as core's math counts it (RetryAfter and
// ResetAfter include the lag), while the lag is within the state's
// lifetime as the Redis backend's TTL gives it with its default 1 s slack:
// two windows plus 1 s after the start of its window for the sliding
// window, one window plus 1 s after the start of its window for the fixed
// window, one window plus 1 s after its newest stamp for the log, and for
// the bucket Max emission intervals plus 1 s after its TAT less those Max
// intervals. A request stamped further back finds the identity absent,
// as Redis' key has expired by then: AllowN counts it from zero and
// replaces the state, Peek reports the fresh quota and keeps it, and the
// idle sweep drops such a state. So after a wall clock that ran ahead (a
// VM resumed with a wrong clock, a bad NTP source) is put right, an
// identity that spent its quota there is admitted again instead of being
// denied for as long as the clock was ahead. Having only stamps, the
// local backend forgets the state at the first request stamped that far
// back, where Redis forgets it only once the key's TTL of real time has
// run out: within that TTL after the correction the local backend may
// admit up to Max units that Redis denies.
//
// Memory: about 179 bytes per identity on the Go heap for the window
// algorithms and 163 for the bucket, with keys of up to 32 bytes (LRU entry,
// map slot, and a slot holding the state and the key's bytes;
// BenchmarkMemoryPerIdentity; a longer key adds its own copy), plus 8 bytes
// per stamp for the log,
// whose slice holds at most Max stamps (its capacity may reach about twice
// that after growth).
package local
