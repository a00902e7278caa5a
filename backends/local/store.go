package local

import (
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/edgelimit/edgelimit/core"
	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// decideFunc is one of core's algorithms as a function of its stored value,
// e.g. (*core.WindowState).DecideSliding. It changes *v only when commit is
// true and the decision allows, except that it may drop expired log stamps in
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

// store is a sharded set of LRUs from key to a value V holding the state.
//
// Small fixed-size states (core.WindowState, core.BucketState) are stored by
// value inside the LRU entry, which the lookup has already brought into the
// CPU cache: a decision copies the value out and writes it back with a second
// lookup of the same, now cached, map slot only when it counted units. That
// is cheaper than following a pointer to a separately allocated state, a
// cache miss per call on a large key set. The log's state is a pointer
// (V = *core.LogState), changed in place.
type store[V any] struct {
	shards []shard[V]
	mask   uint64
	seed   maphash.Seed
	limit  core.Limit
	apply  decideFunc[V]
	fresh  func() V // the state of a new identity; nil means V's zero value
	inline bool     // V is a value that must be written back after a change
}

// shard is one independently locked LRU, padded by two cache lines so two
// shards' locks never share a line (nor an adjacent-line prefetch pair).
type shard[V any] struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[string, V]
	evicted  atomic.Uint64
	work     V // scratch for a decision, guarded by mu
	idleWork V // scratch for the idle check, guarded by mu
	_        [128]byte
}

func newStore[V any](cfg config, l core.Limit, f decideFunc[V]) (*store[V], error) {
	n := cfg.shards
	for n > cfg.capacity {
		n /= 2
	}
	st := &store[V]{shards: make([]shard[V], n), mask: uint64(n - 1), seed: maphash.MakeSeed(), limit: l, apply: f, inline: true}
	for i := range st.shards {
		size := cfg.capacity / n
		if i < cfg.capacity%n {
			size++
		}
		c, err := simplelru.NewLRU[string, V](size, nil)
		if err != nil {
			return nil, err
		}
		st.shards[i].lru = c
	}
	return st, nil
}

func (st *store[V]) shardOf(key string) *shard[V] {
	return &st.shards[maphash.String(st.seed, key)&st.mask]
}

// decide runs the algorithm on key's state; a key not held starts from the
// fresh state and is stored only when units were counted.
func (st *store[V]) decide(key string, now, n int64, commit bool) core.Decision {
	sh := st.shardOf(key)
	sh.mu.Lock()
	v, ok := sh.lru.Get(key)
	if !ok {
		v = st.newValue()
	}
	sh.work = v // the shard's scratch, so taking its address allocates nothing
	d := st.apply(&sh.work, st.limit, now, n, commit)
	switch {
	case !commit || !d.Allowed:
	case !ok:
		st.insert(sh, key, sh.work, now)
	case st.inline:
		sh.lru.Add(key, sh.work) // key is held: updates in place, stores no key
	}
	sh.mu.Unlock() // no defer: nothing above panics on valid input
	return d
}

func (st *store[V]) newValue() V {
	if st.fresh == nil {
		var zero V
		return zero
	}
	return st.fresh()
}

// insert stores a new key, first dropping idle entries at the LRU's tail. The
// key is cloned so the store never pins a caller's larger buffer.
func (st *store[V]) insert(sh *shard[V], key string, v V, now int64) {
	for i := 0; i < sweepPerInsert; i++ {
		_, old, ok := sh.lru.GetOldest()
		if !ok || !st.idle(sh, old, now) {
			break
		}
		sh.lru.RemoveOldest()
	}
	if sh.lru.Add(strings.Clone(key), v) {
		sh.evicted.Add(1)
	}
}

// idle reports whether s has fully reset at now, so dropping it loses
// nothing.
func (st *store[V]) idle(sh *shard[V], v V, now int64) bool {
	sh.idleWork = v
	return st.apply(&sh.idleWork, st.limit, now, 1, false).ResetAfter == 0
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
	v, ok := sh.lru.Peek(key)
	if ok {
		out.set(v)
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
