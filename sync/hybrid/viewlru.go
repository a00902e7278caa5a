package hybrid

import (
	"hash/maphash"
	"runtime"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// minPerShard is the fewest entries a view shard holds: below it the view
// keeps fewer shards, so a small Capacity stays one exact LRU.
const minPerShard = 4096

// viewLRU is the view's bounded LRU of entries, split into independently
// locked shards (golang-lru/v2 simplelru each) so decisions on different
// identities from different cores do not meet on one lock. Capacity and LRU
// order are per shard; the shard of a key is fixed by a seeded hash. Its
// zero value is not usable: build one with newViewLRU.
type viewLRU struct {
	shards []viewShard
	mask   uint64
	seed   maphash.Seed
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
	lru     *simplelru.LRU[string, *entry]
	size    int    // capacity of this shard
	inserts uint64 // keys added since creation
	gap     uint64 // size/8, at least 1
	_       [88]byte
}

// newViewLRU returns a viewLRU holding at most capacity entries (≥ 1).
// onEvict runs for each entry Add pushes out, inside that shard's lock.
func newViewLRU(capacity int, onEvict func(string, *entry)) *viewLRU {
	n := viewShardCount(capacity)
	v := &viewLRU{shards: make([]viewShard, n), mask: uint64(n - 1), seed: maphash.MakeSeed()}
	for i := range v.shards {
		size := capacity / n
		if i < capacity%n {
			size++
		}
		v.shards[i].size, v.shards[i].gap = size, uint64(max(size/8, 1))
		v.shards[i].lru, _ = simplelru.NewLRU(size, onEvict) // size ≥ 1: no error
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

func (v *viewLRU) shard(key string) *viewShard {
	return &v.shards[maphash.String(v.seed, key)&v.mask]
}

// Touch returns key's entry, moving it to the front of its shard when gap
// keys arrived there since it last moved (see viewShard).
func (v *viewLRU) Touch(key string) (*entry, bool) {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.lru.Peek(key)
	if ok && s.inserts-e.promoted >= s.gap {
		s.lru.Get(key)
		e.promoted = s.inserts
	}
	return e, ok
}

// Peek returns key's entry without changing the LRU order.
func (v *viewLRU) Peek(key string) (*entry, bool) {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Peek(key)
}

// Add stores e for key at the front of its shard, evicting that shard's
// oldest entry when full (onEvict runs); it reports whether one was evicted.
func (v *viewLRU) Add(key string, e *entry) bool {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inserts++
	e.promoted = s.inserts
	return s.lru.Add(key, e)
}

// Remove drops key (onEvict runs for it) and reports whether it was held.
func (v *viewLRU) Remove(key string) bool {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Remove(key)
}

// Full reports whether adding key would evict: its shard is at capacity.
func (v *viewLRU) Full(key string) bool {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len() >= s.size
}

// OldestOf returns the entry that adding key would evict, if any.
func (v *viewLRU) OldestOf(key string) (*entry, bool) {
	s := v.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	_, e, ok := s.lru.GetOldest()
	return e, ok
}

// Len returns the entries held over all shards.
func (v *viewLRU) Len() int {
	total := 0
	for i := range v.shards {
		s := &v.shards[i]
		s.mu.Lock()
		total += s.lru.Len()
		s.mu.Unlock()
	}
	return total
}

// Values returns every entry held, shard by shard (oldest first in each).
func (v *viewLRU) Values() []*entry {
	out := make([]*entry, 0, v.Len())
	for i := range v.shards {
		s := &v.shards[i]
		s.mu.Lock()
		out = append(out, s.lru.Values()...)
		s.mu.Unlock()
	}
	return out
}
