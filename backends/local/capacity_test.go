package local

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/stretchr/testify/require"
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
			require.LessOrEqual(t, l.Len(), int(capacity), "after %d identities Len() = %d > capacity %d", i+1, l.Len(), capacity)
		}
		require.Equal(t, int(capacity), l.Len(), "Len() = %d, want the full capacity %d", l.Len(), capacity)
		got, want := l.Evictions(), uint64(9*capacity)
		require.Equal(t, want, got, "Evictions() = %d, want %d", got, want)
	})
}

// TestCapacitySmallerThanShards: the shard count shrinks so the bound holds.
func TestCapacitySmallerThanShards(t *testing.T) {
	l := mustNew(t, core.PerWindow(3, time.Minute), WithCapacity(5), WithShards(64))
	for i := 0; i < 100; i++ {
		mustAllow(t, l, "k"+strconv.Itoa(i), epoch, 1)
	}
	require.LessOrEqual(t, l.Len(), 5, "Len() = %d > capacity 5", l.Len())
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
		require.Equal(t, uint64(0), l.Evictions(), "Evictions() = %d after dropping only idle identities, want 0", l.Evictions())
		require.Equal(t, 32, l.Len(), "Len() = %d, want 32: each insert sweeps up to %d idle identities", l.Len(), sweepPerInsert)
	})
}

// TestEvictionForgetsCount documents the cost of a small capacity: an
// evicted identity starts afresh and may be admitted again.
func TestEvictionForgetsCount(t *testing.T) {
	l := mustNew(t, core.PerWindow(1, time.Minute), WithCapacity(1), WithShards(1))
	mustAllow(t, l, "a", epoch, 1)
	mustAllow(t, l, "b", epoch, 1) // evicts a, which still held a count
	d := mustAllow(t, l, "a", epoch, 1)
	require.True(t, d.Allowed, "an evicted identity should start afresh")
	require.Equal(t, uint64(2), l.Evictions(), "Evictions() = %d, want 2", l.Evictions())
}

// TestHotKeySurvivesChurn: a key hit between every two new identities
// keeps its count however many new identities flood its shard (as in an
// exact LRU), while the idle ones are the ones forgotten: moving a key to
// the front only every capacity/8 arrivals must not let a flood of fresh
// keys reset a key in constant use.
func TestHotKeySurvivesChurn(t *testing.T) {
	clk := core.NewManualClock(time.Unix(1_700_000_000, 0))
	l, err := New(core.PerWindow(100, 16*time.Second), WithCapacity(64), WithShards(1), WithClock(clk))
	require.NoError(t, err)
	ctx := context.Background()
	for i := 0; i < 50; i++ {
		l.Allow(ctx, "hot")
	}
	for i := 0; i < 1000; i++ {
		clk.Advance(time.Millisecond)
		l.Allow(ctx, "flood:"+strconv.Itoa(i))
		l.Allow(ctx, "hot")
	}
	d, _ := l.Peek(ctx, "hot", clk.Now())
	require.False(t, d.Allowed, "hot after 1000 new keys: %+v, want its 100 counted (denied, 0 remaining)", d)
	require.Equal(t, int64(0), d.Remaining, "hot after 1000 new keys: %+v, want its 100 counted (denied, 0 remaining)", d)
	require.GreaterOrEqual(t, l.Evictions(), uint64(900), "%d evictions, want the flood's (≥ 900)", l.Evictions())
	_, ok := l.State("flood:0")
	require.False(t, ok, "the oldest idle key is still held")
}
