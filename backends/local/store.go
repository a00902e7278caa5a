package local

import (
	"hash/maphash"
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
	decide(key string, now, n int64, commit bool) core.Decision
	remove(key string)
	snapshot(key string, out *State) bool
	length() int
	evictions() uint64
}

// sweepPerInsert is how many of the oldest entries an insert may drop when
// their state has fully reset: a bounded, cheap reclaim of idle identities.
const sweepPerInsert = 2

// slot is one identity's state as stored: the algorithm's value, changed in
// place under the shard lock, the shard's insert count when the slot last
// moved to the front of its LRU, and the key's bytes when they fit (the
// LRU's map key then points into the slot, see keybuf).
type slot[V any] struct {
	v        V
	promoted uint64
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
	gap     uint64 // inserts between two moves of one key to the front
	evicted atomic.Uint64
	work    V // scratch for a key not held, guarded by mu
	_       [128]byte
}

func newStore[V any](cfg config, l core.Limit, f decideFunc[V]) (*store[V], error) {
	n := cfg.shards
	for n > cfg.capacity {
		n /= 2
	}
	st := &store[V]{shards: make([]shard[V], n), mask: uint64(n - 1), seed: maphash.MakeSeed(),
		limit: l, apply: f}
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
		st.shards[i].gap = uint64(max(size/8, 1))
	}
	return st, nil
}

func (st *store[V]) shardOf(key string) *shard[V] {
	return &st.shards[maphash.String(st.seed, key)&st.mask]
}

// decide runs the algorithm on key's state; a key not held starts from the
// zero state and is stored only when units were counted.
func (st *store[V]) decide(key string, now, n int64, commit bool) core.Decision {
	sh := st.shardOf(key)
	sh.mu.Lock()
	s, ok := sh.lru.Peek(key)
	if !ok {
		d := st.decideNew(sh, key, now, n, commit)
		sh.mu.Unlock()
		return d
	}
	if sh.inserts-s.promoted >= sh.gap {
		sh.lru.Get(key) // moves it to the front
		s.promoted = sh.inserts
	}
	d := st.apply(&s.v, st.limit, now, n, commit)
	sh.mu.Unlock() // no defer: nothing above panics on valid input
	return d
}

// decideNew decides for a key not held, storing it only when units were
// counted. Called with sh.mu held.
func (st *store[V]) decideNew(sh *shard[V], key string, now, n int64, commit bool) core.Decision {
	var zero V
	sh.work = zero // the shard's scratch, so taking its address allocates nothing
	d := st.apply(&sh.work, st.limit, now, n, commit)
	if commit && d.Allowed {
		st.insert(sh, key, &slot[V]{v: sh.work}, now)
		sh.work = zero // the slot owns what the scratch referenced
	}
	return d
}

// insert stores a new key, first dropping idle entries at the LRU's tail. The
// key is cloned so the store never pins a caller's larger buffer.
func (st *store[V]) insert(sh *shard[V], key string, s *slot[V], now int64) {
	for i := 0; i < sweepPerInsert; i++ {
		_, old, ok := sh.lru.GetOldest()
		if !ok || !st.idle(old, now) {
			break
		}
		sh.lru.RemoveOldest()
	}
	sh.inserts++
	s.promoted = sh.inserts
	if sh.lru.Add(s.key.Own(key), s) {
		sh.evicted.Add(1)
	}
}

// idleGraceMillis is how far before the inserting request's now an entry
// must already have fully reset to be swept: requests are stamped before
// they take the shard lock, so one stamped a little earlier than the
// inserting one (another goroutine, a clock stepped back) may still need
// the state, as the Redis backend's expiry slack keeps a key for a late
// request.
const idleGraceMillis = 1000

// idle reports whether s had fully reset idleGraceMillis before now, so
// dropping it loses nothing for a request stamped up to that much earlier.
// The check counts nothing (commit false).
func (st *store[V]) idle(s *slot[V], now int64) bool {
	return st.apply(&s.v, st.limit, now-idleGraceMillis, 1, false).ResetAfter == 0
}

func (st *store[V]) remove(key string) {
	sh := st.shardOf(key)
	sh.mu.Lock()
	sh.lru.Remove(key)
	sh.mu.Unlock()
}

func (st *store[V]) snapshot(key string, out *State) bool {
	sh := st.shardOf(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, ok := sh.lru.Peek(key)
	if ok {
		out.set(&s.v)
	}
	return ok
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
