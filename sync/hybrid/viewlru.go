package hybrid

import (
	"hash/maphash"
	"runtime"
	"slices"
	"sync"
)

// minPerShard is the fewest entries a view shard holds: below it the view
// keeps fewer shards, so a small Capacity stays one exact LRU.
const minPerShard = 4096

// viewLRU is the view's bounded LRU of entries, split into independently
// locked shards so decisions on different identities from different cores
// do not meet on one lock. Capacity and LRU order are per shard; the shard
// of a key is fixed by a seeded hash, whose other bits place the key in its
// shard's index (viewIndex). The LRU order is a list threaded through the
// entries themselves (entry.newer, entry.older), so an identity costs its
// entry and one index slot, no list element of its own. Its zero value is
// not usable: build one with newViewLRU.
type viewLRU struct {
	shards  []viewShard
	mask    uint64
	seed    maphash.Seed
	onEvict func(string, *entry)
}

// viewShard is one locked LRU, padded so two shards' locks never share a
// cache line. An entry moves to the front (Touch) only once gap new keys
// arrived in the shard since it last moved: an entry is evicted only after
// its shard's capacity of arrivals since its last move, so every entry used
// at least once per 7/8 of the shard's capacity in arrivals stays, as in an
// exact LRU, and the list is touched (two unrelated neighbours, a cache miss
// each) on few decisions.
type viewShard struct {
	mu      sync.Mutex
	index   viewIndex
	newest  *entry // front of the LRU list; nil when empty
	oldest  *entry // back of the LRU list, the next evicted
	size    int    // capacity of this shard
	inserts uint64 // keys added since creation
	gap     uint64 // size/8, at least 1
	_       [48]byte
}

// newViewLRU returns a viewLRU holding at most capacity entries (≥ 1).
// onEvict runs for each entry Add pushes out or Remove drops, inside that
// shard's lock.
func newViewLRU(capacity int, onEvict func(string, *entry)) *viewLRU {
	n := viewShardCount(capacity)
	v := &viewLRU{shards: make([]viewShard, n), mask: uint64(n - 1), seed: maphash.MakeSeed(), onEvict: onEvict}
	for i := range v.shards {
		size := capacity / n
		if i < capacity%n {
			size++
		}
		v.shards[i].size, v.shards[i].gap = size, uint64(max(size/8, 1))
	}
	return v
}

// viewShardCount is the power of two at or above 4 × GOMAXPROCS (at most
// 256), lowered until every shard holds at least minPerShard entries; 1 for
// a small capacity.
func viewShardCount(capacity int) int {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) && n < 256 {
		n *= 2
	}
	for n > 1 && capacity/n < minPerShard {
		n /= 2
	}
	return n
}

// hash is key's seeded hash: its low bits pick the shard, its high ones
// the slot in the shard's index.
func (v *viewLRU) hash(key string) uint64 { return maphash.String(v.seed, key) }

func (v *viewLRU) shard(key string) *viewShard { return v.shardOf(v.hash(key)) }

func (v *viewLRU) shardOf(h uint64) *viewShard { return &v.shards[h&v.mask] }

// Touch returns key's entry, moving it to the front of its shard when gap
// keys arrived there since it last moved (see viewShard).
func (v *viewLRU) Touch(key string) (*entry, bool) {
	h := v.hash(key)
	s := v.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.touch(h, key)
	return e, e != nil
}

// TouchAll is Touch for every key: out[i] is keys[i]'s entry, nil when not
// held (out has len(keys) elements). It takes each shard's lock once and
// looks up that shard's keys back to back, so the CPU overlaps their cache
// misses (an index slot and an entry each, in a view larger than the
// cache), where a lock per key would wait for each in turn: on x86 a lock
// is an atomic read-modify-write, which waits for every load before it.
func (v *viewLRU) TouchAll(keys []string, out []*entry) {
	hs := make([]uint64, len(keys))
	start := make([]int, len(v.shards)+1) // keys of shard i: order[start[i]:start[i+1]]
	for i, k := range keys {
		hs[i] = v.hash(k)
		start[hs[i]&v.mask+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	order, next := make([]int32, len(keys)), slices.Clone(start)
	for i, h := range hs {
		order[next[h&v.mask]] = int32(i)
		next[h&v.mask]++
	}
	for si := range v.shards {
		if start[si] == start[si+1] {
			continue
		}
		s := &v.shards[si]
		s.mu.Lock()
		for _, i := range order[start[si]:start[si+1]] {
			out[i] = s.touch(hs[i], keys[i])
		}
		s.mu.Unlock()
	}
}

// touch is Touch within the shard, its lock held; nil when key is not held.
func (s *viewShard) touch(h uint64, key string) *entry {
	e := s.index.get(h, key)
	if e != nil && s.inserts-e.promoted >= s.gap {
		s.unlink(e)
		s.pushFront(e)
		e.promoted = s.inserts
	}
	return e
}

// Peek returns key's entry without changing the LRU order.
func (v *viewLRU) Peek(key string) (*entry, bool) {
	h := v.hash(key)
	s := v.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.index.get(h, key)
	return e, e != nil
}

// Add stores e for key (e.key) at the front of its shard, evicting that
// shard's oldest entry when full (onEvict runs); it reports whether one was
// evicted. An entry already held for key is replaced, without onEvict.
func (v *viewLRU) Add(key string, e *entry) bool {
	h := v.hash(key)
	s := v.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inserts++
	e.promoted = s.inserts
	if old := s.index.remove(h, key); old != nil {
		s.unlink(old)
	}
	s.index.put(h, e)
	s.pushFront(e)
	if s.index.n <= s.size {
		return false
	}
	out := s.oldest
	s.index.remove(v.hash(out.key), out.key)
	s.unlink(out)
	v.onEvict(out.key, out)
	return true
}

// Remove drops key (onEvict runs for it) and reports whether it was held.
func (v *viewLRU) Remove(key string) bool {
	h := v.hash(key)
	s := v.shardOf(h)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.index.remove(h, key)
	if e == nil {
		return false
	}
	s.unlink(e)
	v.onEvict(key, e)
	return true
}

// Full reports whether adding key would evict: its shard is at capacity.
func (v *viewLRU) Full(key string) bool {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index.n >= s.size
}

// OldestOf returns the entry that adding key would evict, if any.
func (v *viewLRU) OldestOf(key string) (*entry, bool) {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.oldest, s.oldest != nil
}

// Len returns the entries held over all shards.
func (v *viewLRU) Len() int {
	total := 0
	for i := range v.shards {
		s := &v.shards[i]
		s.mu.Lock()
		total += s.index.n
		s.mu.Unlock()
	}
	return total
}

// pushFront puts e, not in the list, at its front.
func (s *viewShard) pushFront(e *entry) {
	e.older, e.newer = s.newest, nil
	if s.newest != nil {
		s.newest.newer = e
	} else {
		s.oldest = e
	}
	s.newest = e
}

// unlink takes e out of the list.
func (s *viewShard) unlink(e *entry) {
	if e.newer != nil {
		e.newer.older = e.older
	} else {
		s.newest = e.older
	}
	if e.older != nil {
		e.older.newer = e.newer
	} else {
		s.oldest = e.newer
	}
	e.older, e.newer = nil, nil
}
