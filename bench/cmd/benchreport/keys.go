package main

import (
	"fmt"
	"math/rand/v2"
)

// keySet is the traffic of a table: distinct identities and a fixed
// pseudo-random order over them, so consecutive calls touch unrelated
// memory as real traffic does (one hot key would hide the map lookup).
//
// keys warm the limiters; the traffic (at) draws from lookup, byte-equal
// copies at other addresses. In production a request's key is parsed
// afresh, never the very string a limiter stored; a limiter that stores the
// caller's string would otherwise compare it by pointer (Go's string
// equality stops at equal pointers) and skip the cache miss of reading its
// stored key, which no real request skips.
type keySet struct {
	keys   []string
	lookup []string // copies of keys, same order
	order  []int32  // indexes into keys; its length is a power of two
}

// newKeySet returns n identities "user:000000000042" (12 digits, the form
// redis-benchmark's __rand_int__ produces) and an order of 1<<20 draws.
func newKeySet(n int) *keySet {
	ks := &keySet{keys: make([]string, n), lookup: make([]string, n), order: make([]int32, 1<<20)}
	for i := range ks.keys {
		ks.keys[i] = keyName(i)
	}
	for i := range ks.lookup {
		ks.lookup[i] = keyName(i) // allocated apart from keys, interleaved with nothing
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range ks.order {
		ks.order[i] = int32(r.IntN(n))
	}
	return ks
}

// keyName is the i-th identity's name.
func keyName(i int) string { return fmt.Sprintf("user:%012d", i) }

// at returns the i-th key of the traffic.
func (ks *keySet) at(i int) string { return ks.lookup[ks.order[i&(len(ks.order)-1)]] }
