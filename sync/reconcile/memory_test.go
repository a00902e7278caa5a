package reconcile

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

var (
	memIdentities = flag.Int("identities", 5000, "identities for TestHybridMemoryPerIdentity (the at-scale figure: -args -identities=1000000 -pops=8,32)")
	memPoPs       = flag.String("pops", "1,8", "PoP counts TestHybridMemoryPerIdentity measures, comma-separated")
)

// TestHybridMemoryPerIdentity measures the Redis used_memory grown per
// identity by the hybrid's layout — one hash per identity and window, a
// field per PoP counter id (PoP#incarnation) — with every identity seen by
// each of P PoPs in two windows (57 units in this one, 43 in the one
// before), each hash with its TTL. More PoPs must cost more: a field each.
//
//	go test -count=1 -run HybridMemoryPerIdentity -v ./sync/reconcile/ -args -identities=1000000 -pops=8,32
func TestHybridMemoryPerIdentity(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	prev := 0.0
	for _, ps := range strings.Split(*memPoPs, ",") {
		pops, err := strconv.Atoi(ps)
		require.NoError(t, err, "-pops %q", *memPoPs)
		require.GreaterOrEqual(t, pops, 1, "-pops %q", *memPoPs)
		per := hybridLayoutBytes(t, ctx, rdb, *memIdentities, pops)
		t.Logf("%d identities seen by %d PoPs: %.1f bytes of used_memory per identity (%.1f per PoP)",
			*memIdentities, pops, per, per/float64(pops))
		require.Greater(t, per, prev, "%d PoPs: %.1f bytes per identity, not above %.1f with fewer", pops, per, prev)
		require.Greater(t, per, float64(0), "%d PoPs: %.1f bytes per identity, not above %.1f with fewer", pops, per, prev)
		prev = per
		err = rdb.FlushDB(ctx).Err()
		require.NoError(t, err)
		// Redis shrinks its tables in its cron (10 runs a second) and tells
		// no one when it is done: 300 ms is three runs. A late shrink only
		// adds noise to a figure the checks compare with the previous one.
		time.Sleep(300 * time.Millisecond)
	}
}

// hybridLayoutBytes writes n identities through pops Stores (one per PoP,
// four at a time) and returns used_memory's growth per identity.
func hybridLayoutBytes(t *testing.T, ctx context.Context, rdb *redis.Client, n, pops int) float64 {
	t.Helper()
	before := usedMemory(t, ctx, rdb)
	idx := time.Now().UnixMilli() / 60_000
	var wg sync.WaitGroup
	errs := make([]error, pops)
	sem := make(chan struct{}, 4)
	for p := range pops {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s := New(rdb, "el", fmt.Sprintf("pop%d#%08x", p, 0x9e3779b9*uint32(p+1)), time.Minute)
			items := make([]Item, 0, 256)
			for i := 0; i < n && errs[p] == nil; i++ {
				items = append(items, Item{Key: fmt.Sprintf("user:%08d", i), Index: idx, Own: [2]int64{57, 43}})
				if len(items) == cap(items) || i == n-1 {
					_, errs[p] = s.Flush(ctx, items)
					items = items[:0]
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	// Incremental rehashing finishes in Redis' cron with no event to wait
	// on (see above): 300 ms is three runs of it.
	time.Sleep(300 * time.Millisecond)
	return float64(usedMemory(t, ctx, rdb)-before) / float64(n)
}

func usedMemory(t *testing.T, ctx context.Context, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(ctx, "memory").Result()
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			m, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			require.NoError(t, err)
			return m
		}
	}
	require.FailNow(t, "no used_memory in INFO memory")
	return 0
}
