package local

import (
	"hash/maphash"
	"math"
	"sync"
	"sync/atomic"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/keybuf"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// decideFunc is one of core's algorithms as a method on its state, e.g.
// (*core.WindowState).DecideSliding. It changes *v only when commit is true
// and the decision allows, except that it may drop expired log stamps in
// place.
type decideFunc[V any] func(v *V, l core.Limit, now, n int64, commit bool) core.Decision

// engine is a store for one algorithm's state type, seen without generics so
// the Limiter holds any of them.
type engine interface {
	decide(key string, now, mono, n int64, commit bool) core.Decision
	remove(key string)
	snapshot(key string, mono int64, out *State) bool
	length() int
	evictions() uint64
}

// sweepPerInsert is how many of the oldest entries an insert may drop when
// their state has fully reset: a bounded, cheap reclaim of idle identities.
const sweepPerInsert = 2

// slot is one identity's state as stored: the algorithm's value, changed in
// place under the shard lock, the low 32 bits of the shard's insert count
// when the slot last moved to the front of its LRU, the whole second of
// monotonic time from which the state is forgotten (see expiryAfter), and
// the key's bytes when they fit (the LRU's map key then points into the
// slot, see keybuf). Two 32-bit fields keep the window's slot at 64 bytes,
// one cache line.
//
// promoted wraps after 2^32 inserts, which only a shard holding more than
// 2^32 keys (hundreds of gigabytes) could see in one key's stay: the key
// would then move to the front later than due, never lose its state
// otherwise.
type slot[V any] struct {
	v        V
	promoted uint32
	expiry   uint32
	key      keybuf.Buf // the stored key's bytes when it fits (see keybuf)
}

// store is a sharded set of LRUs from key to a *slot holding the state.
//
// A decision on a held key is one map lookup (simplelru.Peek) and an in-place
// change of the slot: no write-back, no second lookup. Moving the entry to
// the front of the LRU list touches two unrelated list neighbours, a cache
// miss each on a large key set, so it is done only when the shard has taken
// in at least gap new keys since the slot last moved (see shard.gap).
type store[V any] struct {
	shards []shard[V]
	mask   uint64
	seed   maphash.Seed
	limit  core.Limit
	apply  decideFunc[V]
	// lifetime is lifetimeMillis(limit): the cap of a state's time to live.
	lifetime int64
	// byStamps: the states age by their stamps alone (no monotonic source,
	// see Monotonic), so the insert's sweep also drops a state its stamps
	// say has fully reset. With a monotonic source it does not: one
	// request stamped far ahead would make every other identity's live
	// state look reset (TestFarStampSweepsNothingLive).
	byStamps bool
}

// shard is one independently locked LRU, padded by two cache lines so two
// shards' locks never share a line (nor an adjacent-line prefetch pair).
//
// Promotion: a key is evicted only once its shard has taken in its capacity
// of new keys since the key last moved to the front (nothing else pushes it
// towards the tail). Moving a key used again once gap = capacity/8 (at least
// 1) new keys arrived since its last move therefore keeps every key used at
// least once per 7/8 of the shard's capacity in new arrivals, exactly as an
// exact LRU would; only among keys idle longer than that is the order
// approximate, to within gap arrivals.
type shard[V any] struct {
	mu      sync.Mutex
	lru     *simplelru.LRU[string, *slot[V]]
	inserts uint64 // keys added since New, guarded by mu
	gap     uint32 // inserts between two moves of one key to the front
	evicted atomic.Uint64
	work    V     // scratch for a key not held, guarded by mu
	mono    int64 // the latest monotonic reading a caller brought under mu (latest)
	_       [128]byte
}

// latest returns the latest monotonic reading brought under sh.mu, mono
// included: callers read the clock before they take the lock, so one
// stalled between the two (preempted on a loaded machine) arrives with a
// reading older than the writer before it. Its decision runs at the time
// the lock was taken, as a Redis script runs at the time Redis executes
// it: it never moves a state's expiry back, and never finds alive a state
// an earlier caller found expired (TestStalledWriterKeepsTheExpiry).
// Called with sh.mu held.
func (sh *shard[V]) latest(mono int64) int64 {
	sh.mono = max(sh.mono, mono)
	return sh.mono
}

func newStore[V any](cfg config, l core.Limit, f decideFunc[V]) (*store[V], error) {
	n := cfg.shards
	for n > cfg.capacity {
		n /= 2
	}
	st := &store[V]{shards: make([]shard[V], n), mask: uint64(n - 1), seed: maphash.MakeSeed(),
		limit: l, apply: f, lifetime: lifetimeMillis(l), byStamps: monotonicOf(cfg) == Monotonic(frozen{})}
	for i := range st.shards {
		size := cfg.capacity / n
		if i < cfg.capacity%n {
			size++
		}
		c, err := simplelru.NewLRU[string, *slot[V]](size, nil)
		if err != nil {
			return nil, err
		}
		st.shards[i].lru = c
		st.shards[i].gap = uint32(min(uint64(max(size/8, 1)), math.MaxUint32))
	}
	return st, nil
}

func (st *store[V]) shardOf(key string) *shard[V] {
	return &st.shards[maphash.String(st.seed, key)&st.mask]
}

// decide runs the algorithm on key's state at stamp now and monotonic
// milliseconds mono; a key not held, or whose state expired by mono (it is
// then dropped), starts from the zero state and is stored only when units
// were counted. A decision that counts units sets the state's expiry.
// Callers read mono before taking the shard lock; the decision takes the
// latest reading brought under the lock (shard.latest), so a goroutine
// stalled between the two never sets an expiry sooner than the writer
// before it. The expiry slack covers requests reaching the lock in another
// order than their stamps.
func (st *store[V]) decide(key string, now, mono, n int64, commit bool) core.Decision {
	sh := st.shardOf(key)
	sh.mu.Lock()
	mono = sh.latest(mono)
	s, ok := sh.lru.Peek(key)
	if ok && expired(s, mono) {
		sh.lru.Remove(key) // as Redis' key would have expired: not an eviction
		ok = false
	}
	if !ok {
		d := st.decideNew(sh, key, now, mono, n, commit)
		sh.mu.Unlock()
		return d
	}
	if uint32(sh.inserts)-s.promoted >= sh.gap {
		sh.lru.Get(key) // moves it to the front
		s.promoted = uint32(sh.inserts)
	}
	d := st.apply(&s.v, st.limit, now, n, commit)
	if commit && d.Allowed {
		s.expiry = st.expiryAfter(d, mono)
	}
	sh.mu.Unlock() // no defer: nothing above panics on valid input
	return d
}

// decideNew decides for a key not held, storing it only when units were
// counted. Called with sh.mu held.
func (st *store[V]) decideNew(sh *shard[V], key string, now, mono, n int64, commit bool) core.Decision {
	var zero V
	sh.work = zero // the shard's scratch, so taking its address allocates nothing
	d := st.apply(&sh.work, st.limit, now, n, commit)
	if commit && d.Allowed {
		st.insert(sh, key, &slot[V]{v: sh.work, expiry: st.expiryAfter(d, mono)}, now, mono)
		sh.work = zero // the slot owns what the scratch referenced
	}
	return d
}

// insert stores a new key, first dropping idle entries at the LRU's tail. The
// key is cloned so the store never pins a caller's larger buffer.
func (st *store[V]) insert(sh *shard[V], key string, s *slot[V], now, mono int64) {
	for i := 0; i < sweepPerInsert; i++ {
		_, old, ok := sh.lru.GetOldest()
		if !ok || !st.idle(old, now, mono) {
			break
		}
		sh.lru.RemoveOldest()
	}
	sh.inserts++
	s.promoted = uint32(sh.inserts)
	if sh.lru.Add(s.key.Own(key), s) {
		sh.evicted.Add(1)
	}
}

// idle reports whether dropping s loses nothing: it expired by monotonic
// time (Redis would have expired its key), or, for states aged by their
// stamps alone (byStamps), by the stamps it had fully reset
// expirySlackMillis before now, so no request stamped up to that much
// earlier needs it. The stamp check counts nothing (commit false). A
// request stamped late never makes another identity's state idle: its now
// lies behind, not past, that state's end; one stamped far ahead does,
// which only a Limiter without a monotonic source has to accept.
func (st *store[V]) idle(s *slot[V], now, mono int64) bool {
	return expired(s, mono) || st.byStamps && st.apply(&s.v, st.limit, now-expirySlackMillis, 1, false).ResetAfter == 0
}

func (st *store[V]) remove(key string) {
	sh := st.shardOf(key)
	sh.mu.Lock()
	sh.lru.Remove(key)
	sh.mu.Unlock()
}

// snapshot copies key's state into out unless it is not held or expired by
// monotonic milliseconds mono.
func (st *store[V]) snapshot(key string, mono int64, out *State) bool {
	sh := st.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	mono = sh.latest(mono)
	s, ok := sh.lru.Peek(key)
	if ok && !expired(s, mono) {
		out.set(&s.v)
		return true
	}
	return false
}

func (st *store[V]) length() int {
	total := 0
	for i := range st.shards {
		sh := &st.shards[i]
		sh.mu.Lock()
		total += sh.lru.Len()
		sh.mu.Unlock()
	}
	return total
}

func (st *store[V]) evictions() uint64 {
	var total uint64
	for i := range st.shards {
		total += st.shards[i].evicted.Load()
	}
	return total
}
