// Package local is edgelimit's in-process limiter: every identity's state
// lives in this process, in a sharded, bounded LRU built on
// github.com/hashicorp/golang-lru/v2, and every decision is made by the pure
// math of package core, so it gives the same answers as the Redis backend for
// the same history.
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
// Memory: about 179 bytes per identity on the Go heap for the window
// algorithms and 163 for the bucket, with keys of up to 32 bytes (LRU entry,
// map slot, and a slot holding the state and the key's bytes;
// BenchmarkMemoryPerIdentity; a longer key adds its own copy), plus 8 bytes
// per stamp for the log,
// whose slice holds at most Max stamps (its capacity may reach about twice
// that after growth).
package local
