// Package local is edgelimit's in-process limiter: every identity's state
// lives in this process, in a sharded, bounded LRU built on
// github.com/hashicorp/golang-lru/v2, and every decision is made by the pure
// math of package core, so it gives the same answers as the Redis backend for
// the same history.
//
// It is the fast path of a single node: a decision on a key already held takes one shard lock,
// one map lookup, one read of the monotonic clock (which gives the stamp
// too; none with a core.CoarseClock; see "A clock put back") and no allocation. A key of up to 32 bytes is stored inside
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
// tail — those expired by monotonic time, or, for a limiter without a
// monotonic source (its clock a core.ManualClock or a test's), fully reset
// by the stamps a second before the inserting request's — so idle
// identities neither pin memory nor cause counted evictions. (With a
// monotonic source the stamps do not judge other identities' states: one
// request stamped far ahead would make every live state look reset.)
// Capacity and LRU order are per shard (capacity is split evenly), so the
// identity forgotten is the least recently used of its shard, not of all.
//
// # A clock put back
//
// A request is decided on its stamp, and one stamped before its identity's
// state (a late request, a clock put back) is counted in that state. States
// are aged apart from the stamps, as the Redis backend's keys are by their
// TTLs: by monotonic time (see Monotonic, WithMonotonic), which a step of
// the wall clock does not move. A counted write sets the state's time to
// live as the Redis scripts set its key's TTL: the time until no request
// at the write's stamp or later can be counted in it, capped at its
// lifetime (two windows for the sliding window, one for the fixed window
// and the log, the burst's span for the bucket), plus one second of slack.
// Once that much monotonic time has passed since the last counted write
// the state is forgotten (within the next second: a slot keeps its expiry
// in whole seconds; earlier only by a core.CoarseClock's lag, or by a
// request whose clock read waited on the shard lock, both well within the
// slack) — on the identity's next request, or by an insert's sweep. An identity that spent its quota while the clock ran ahead is
// therefore admitted again within the lifetime plus two seconds of the
// clock being put back, and a state written more recently is kept whatever
// the stamps say, so a late request never resets its own count. A denied
// request or a Peek does not extend the time to live.
//
// Memory: about 179 bytes per identity on the Go heap for the window
// algorithms and the bucket, with keys of up to 32 bytes (LRU entry,
// map slot, and a slot holding the state, its expiry and the key's bytes;
// BenchmarkMemoryPerIdentity; a longer key adds its own copy), plus 8 bytes
// per stamp for the log,
// whose slice holds at most Max stamps (its capacity may reach about twice
// that after growth).
package local
