package hybrid

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// keysOfShard returns n distinct keys that v places in the same shard as
// "anchor", and that shard.
func keysOfShard(v *viewLRU, n int) ([]string, *viewShard) {
	want := v.shard("anchor")
	var out []string
	for i := 0; len(out) < n; i++ {
		if k := fmt.Sprint("k", i); v.shard(k) == want {
			out = append(out, k)
		}
	}
	return out, want
}

// TestViewLRUEvictsPerShard: the view is split into shards of Capacity /
// shards entries; filling one shard evicts that shard's oldest entry
// (Full and OldestOf name it beforehand) and leaves the others alone.
func TestViewLRUEvictsPerShard(t *testing.T) {
	var evicted []string
	v := newViewLRU(4*minPerShard, func(k string, _ *entry) { evicted = append(evicted, k) })
	if len(v.shards) < 2 {
		t.Fatalf("%d shards for %d entries, want several", len(v.shards), 4*minPerShard)
	}
	keys, sh := keysOfShard(v, sh0Size(v)+1)
	other := "other"
	for v.shard(other) == sh {
		other += "x"
	}
	v.Add(other, newEntry(other, 0, 0))
	for _, k := range keys[:len(keys)-1] {
		if v.Full(k) {
			t.Fatalf("shard full before %d entries", sh.size)
		}
		v.Add(k, newEntry(k, 0, 0))
	}
	last := keys[len(keys)-1]
	if !v.Full(last) {
		t.Fatal("shard not full at its capacity")
	}
	if e, ok := v.OldestOf(last); !ok || e.key != keys[0] {
		t.Fatalf("OldestOf names %v, want %s", e, keys[0])
	}
	v.Add(last, newEntry(last, 0, 0))
	if len(evicted) != 1 || evicted[0] != keys[0] {
		t.Fatalf("evicted %v, want [%s]", evicted, keys[0])
	}
	if _, ok := v.Peek(other); !ok || v.Len() != sh.size+1 {
		t.Fatalf("another shard lost its entry, or Len %d != %d", v.Len(), sh.size+1)
	}
}

// sh0Size is the capacity of the shard "anchor" is in.
func sh0Size(v *viewLRU) int { return v.shard("anchor").size }

// TestViewLRUHotEntrySurvivesChurn: an entry touched between every two new
// entries of its shard stays however many arrive (as in an exact LRU),
// although Touch moves it to the front only every size/8 arrivals; an
// entry never touched again is evicted.
func TestViewLRUHotEntrySurvivesChurn(t *testing.T) {
	v := newViewLRU(minPerShard, func(string, *entry) {})
	keys, sh := keysOfShard(v, 3*sh0Size(v)+2)
	hot, idle := keys[0], keys[1]
	v.Add(hot, newEntry(hot, 0, 0))
	v.Add(idle, newEntry(idle, 0, 0))
	moved := 0
	for _, k := range keys[2:] {
		v.Add(k, newEntry(k, 0, 0))
		before := sh.inserts
		if e, ok := v.Touch(hot); !ok {
			t.Fatalf("hot evicted after %d arrivals", before)
		} else if e.promoted == before {
			moved++
		}
	}
	if _, ok := v.Peek(idle); ok {
		t.Fatal("an entry never touched survived three shards' worth of arrivals")
	}
	if want := 3 * sh.size / int(sh.gap); moved > want+1 {
		t.Fatalf("hot moved to the front %d times in %d arrivals, want about %d (every %d)", moved, 3*sh.size, want, sh.gap)
	}
}

// TestViewLRUTouchAllIsTouchPerKey: TouchAll over keys (held, unheld and
// repeated, across shards) finds what Touch finds key by key and leaves
// every shard's LRU list in the same order.
func TestViewLRUTouchAllIsTouchPerKey(t *testing.T) {
	one := newViewLRU(8*minPerShard, func(string, *entry) {})
	all := newViewLRU(8*minPerShard, func(string, *entry) {})
	all.seed = one.seed
	if len(one.shards) < 2 {
		t.Fatalf("%d shards, want several", len(one.shards))
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 3 * minPerShard {
		k := fmt.Sprint("k", i)
		one.Add(k, newEntry(k, 0, 0))
		all.Add(k, newEntry(k, 0, 0))
	}
	for round := range 200 {
		keys := make([]string, 1+rng.IntN(300))
		for i := range keys {
			keys[i] = fmt.Sprint("k", rng.IntN(4*minPerShard)) // a quarter not held
		}
		got := make([]*entry, len(keys))
		all.TouchAll(keys, got)
		for i, k := range keys {
			want, ok := one.Touch(k)
			if ok != (got[i] != nil) || ok && want.key != got[i].key {
				t.Fatalf("round %d: TouchAll found %v for %s, Touch %v", round, got[i], k, want)
			}
		}
		k := fmt.Sprint("new", round) // arrivals, so entries come due to move
		one.Add(k, newEntry(k, 0, 0))
		all.Add(k, newEntry(k, 0, 0))
	}
	for si := range one.shards {
		a, b := one.shards[si].oldest, all.shards[si].oldest
		for ; a != nil && b != nil; a, b = a.newer, b.newer {
			if a.key != b.key {
				t.Fatalf("shard %d: list order differs at %s / %s", si, a.key, b.key)
			}
		}
		if a != nil || b != nil {
			t.Fatalf("shard %d: lists of different lengths", si)
		}
	}
}
