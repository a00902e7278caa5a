package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestExpirySlackAndDeleteWindows: WithExpirySlack lengthens every TTL the
// scripts set (Flush and Decide); Delete removes the two windows of each
// index given, and only those, in one DEL.
func TestExpirySlackAndDeleteWindows(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	s := New(rdb, "el", "A", time.Second, WithExpirySlack(time.Hour))
	var items []Item
	for idx := int64(1); idx <= 6; idx++ {
		items = append(items, Item{Key: "k", Index: idx, Own: [2]int64{1, 0}})
	}
	_, err := s.Flush(ctx, items)
	require.NoError(t, err)
	_, _, err = s.Decide(ctx, DecideArgs{Item: Item{Key: "d", Index: 1}, N: 1, Max: 5, WindowMillis: 1000})
	require.NoError(t, err)
	for _, k := range []string{Key("el", "k", 3), Key("el", "d", 1)} {
		ttl := rdb.PTTL(ctx, k).Val()
		require.Greater(t, ttl, time.Hour, "%s: TTL %v, want an hour plus two windows", k, ttl)
		require.LessOrEqual(t, ttl, time.Hour+2*time.Second, "%s: TTL %v, want an hour plus two windows", k, ttl)
	}
	err = s.Delete(ctx, "k", 6, 3, 6, 5)
	require.NoError(t, err)
	for idx := int64(1); idx <= 6; idx++ {
		gone := idx >= 2
		n := rdb.Exists(ctx, Key("el", "k", idx)).Val()
		require.Equal(t, gone, n == 0, "window %d: exists=%d, want deleted=%v", idx, n, gone)
	}
}
