package hybrid

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestViewIndexMatchesAMap drives a viewIndex and a Go map with the same
// random puts, removes and lookups, under hashes drawn from a few homes
// (long probe runs that wrap around the table's end, the cases the
// back-shifting delete must get right), and checks after every step that
// every key held is found, every key removed is not, and the counts agree.
func TestViewIndexMatchesAMap(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var idx viewIndex
		want := map[string]*entry{}
		hashOf := map[string]uint64{}
		keys := make([]string, 120)
		for i := range keys {
			keys[i] = fmt.Sprint("k", i)
			// Few distinct high halves: many keys share a home slot;
			// the low half keeps the full hashes distinct for most.
			hashOf[keys[i]] = rng.Uint64N(5)<<61 | rng.Uint64N(3)<<32 | uint64(i%7)
		}
		for step := range 1500 {
			k := keys[rng.IntN(len(keys))]
			h := hashOf[k]
			switch op := rng.IntN(3); {
			case op == 0 && want[k] == nil:
				e := newEntry(k, 0, 0)
				idx.put(h, e)
				want[k] = e
			case op == 1:
				got := idx.remove(h, k)
				if got != want[k] {
					t.Fatalf("seed %d step %d: remove(%s) = %v, want %v", seed, step, k, got, want[k])
				}
				delete(want, k)
			}
			if idx.n != len(want) {
				t.Fatalf("seed %d step %d: n %d, want %d", seed, step, idx.n, len(want))
			}
			for _, kk := range keys {
				if got := idx.get(hashOf[kk], kk); got != want[kk] {
					t.Fatalf("seed %d step %d: get(%s) = %v, want %v", seed, step, kk, got, want[kk])
				}
			}
		}
	}
}

// TestViewIndexGrowsAndKeepsLoad: the table doubles before it is three
// quarters full, so a probe always ends at an empty slot.
func TestViewIndexGrowsAndKeepsLoad(t *testing.T) {
	var idx viewIndex
	if idx.get(1, "x") != nil || idx.remove(1, "x") != nil {
		t.Fatal("the zero index holds something")
	}
	for i := range 10000 {
		k := fmt.Sprint("k", i)
		idx.put(uint64(i)*0x9E3779B97F4A7C15, newEntry(k, 0, 0))
		if 4*idx.n > 3*len(idx.slots) {
			t.Fatalf("%d entries in %d slots: over three quarters", idx.n, len(idx.slots))
		}
	}
	if len(idx.slots) != 16384 {
		t.Fatalf("%d slots for 10,000 entries, want 16,384", len(idx.slots))
	}
}

// TestViewLRUListOrder: the list runs oldest to newest, Remove runs
// onEvict once and unlinks the entry, and a re-Add replaces without onEvict.
func TestViewLRUListOrder(t *testing.T) {
	var evicted []string
	v := newViewLRU(8, func(k string, _ *entry) { evicted = append(evicted, k) })
	for _, k := range []string{"a", "b", "c", "d"} {
		v.Add(k, newEntry(k, 0, 0))
	}
	if !v.Remove("b") || v.Remove("b") {
		t.Fatal("Remove of a held key false, or of a removed one true")
	}
	v.Add("a", newEntry("a", 0, 0)) // replaced: now the newest
	var got []string
	for e := v.shards[0].oldest; e != nil; e = e.newer {
		got = append(got, e.key)
	}
	if fmt.Sprint(got) != "[c d a]" || fmt.Sprint(evicted) != "[b]" || v.Len() != 3 {
		t.Fatalf("Values %v, evicted %v, Len %d; want [c d a], [b], 3", got, evicted, v.Len())
	}
	if e, _ := v.OldestOf("x"); e.key != "c" {
		t.Fatalf("OldestOf names %s, want c", e.key)
	}
}
