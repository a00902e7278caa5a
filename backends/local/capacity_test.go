package local

import (
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestCapacityBound: ten times the capacity in distinct identities never
// holds more than the capacity, and every forced loss of live state is
// counted.
func TestCapacityBound(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		const capacity = 1000
		l := mustNew(t, core.Limit{Max: 3, Window: time.Minute, Algorithm: a}, WithCapacity(capacity), WithShards(16))
		for i := 0; i < 10*capacity; i++ {
			mustAllow(t, l, "ip:"+strconv.Itoa(i), epoch, 1)
			if l.Len() > capacity {
				t.Fatalf("after %d identities Len() = %d > capacity %d", i+1, l.Len(), capacity)
			}
		}
		if l.Len() != capacity {
			t.Fatalf("Len() = %d, want the full capacity %d", l.Len(), capacity)
		}
		if got, want := l.Evictions(), uint64(9*capacity); got != want {
			t.Fatalf("Evictions() = %d, want %d", got, want)
		}
	})
}

// TestCapacitySmallerThanShards: the shard count shrinks so the bound holds.
func TestCapacitySmallerThanShards(t *testing.T) {
	l := mustNew(t, core.PerWindow(3, time.Minute), WithCapacity(5), WithShards(64))
	for i := 0; i < 100; i++ {
		mustAllow(t, l, "k"+strconv.Itoa(i), epoch, 1)
	}
	if l.Len() > 5 {
		t.Fatalf("Len() = %d > capacity 5", l.Len())
	}
}

// TestIdleEntriesAreFree: identities whose state fully reset are dropped to
// make room without counting an eviction, and without capacity pressure the
// oldest idle ones are swept as new identities arrive.
func TestIdleEntriesAreFree(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 3, Window: time.Second, Algorithm: a}, WithCapacity(64), WithShards(1))
		for i := 0; i < 64; i++ {
			mustAllow(t, l, "old"+strconv.Itoa(i), epoch, 1)
		}
		later := epoch.Add(3 * time.Second) // every old state has fully reset
		for i := 0; i < 32; i++ {
			mustAllow(t, l, "new"+strconv.Itoa(i), later, 1)
		}
		if l.Evictions() != 0 {
			t.Fatalf("Evictions() = %d after dropping only idle identities, want 0", l.Evictions())
		}
		if l.Len() != 32 {
			t.Fatalf("Len() = %d, want 32: each insert sweeps up to %d idle identities", l.Len(), sweepPerInsert)
		}
	})
}

// TestEvictionForgetsCount documents the cost of a small capacity: an
// evicted identity starts afresh and may be admitted again.
func TestEvictionForgetsCount(t *testing.T) {
	l := mustNew(t, core.PerWindow(1, time.Minute), WithCapacity(1), WithShards(1))
	mustAllow(t, l, "a", epoch, 1)
	mustAllow(t, l, "b", epoch, 1) // evicts a, which still held a count
	if d := mustAllow(t, l, "a", epoch, 1); !d.Allowed {
		t.Fatal("an evicted identity should start afresh")
	}
	if l.Evictions() != 2 {
		t.Fatalf("Evictions() = %d, want 2", l.Evictions())
	}
}
