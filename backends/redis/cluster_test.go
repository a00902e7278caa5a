package redis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClusterSlotsAndSpread: on a real three-master cluster, every key one
// identity writes (all four algorithms, hostile ids included) lives in one
// slot on one master, and 300 plain identities spread over all three
// masters, each holding a fair share. No call fails with CROSSSLOT or an
// unhandled MOVED.
func TestClusterSlotsAndSpread(t *testing.T) {
	c, cl := redistest.Cluster(t)
	ctx := context.Background()
	now := time.Now()
	lims := map[core.Algorithm]*Limiter{}
	for _, lim := range everyLimit(core.PerWindow(5, time.Minute)) {
		lims[lim.Algorithm] = newLimiter(t, c, lim, WithTimeout(hammerTimeout), WithExpirySlack(time.Hour))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := []string{"user:42", "{user}:42", "}", "\\}", "a\x00b", "\xff\xfe{}:", hostileID(rng), hostileID(rng)}
	for _, id := range ids {
		slots := map[int64]bool{}
		for _, a := range core.Algorithms {
			_, err := lims[a].AllowN(ctx, id, now, 1)
			require.NoError(t, err, "id %q %s", id, a)
			s, err := c.ClusterKeySlot(ctx, lims[a].Key(id)).Result()
			require.NoError(t, err)
			slots[s] = true
		}
		require.Len(t, slots, 1, "id %q: keys in slots %v, want one", id, slots)
		var slot int64
		for s := range slots {
			slot = s
		}
		// The master owning that slot holds all four keys.
		var holders atomic.Int32 // ForEachMaster runs fn concurrently
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
			n, err := m.ClusterCountKeysInSlot(ctx, int(slot)).Result()
			if err == nil && n > 0 {
				holders.Add(1)
			}
			return err
		})
		require.NoError(t, err)
		h := holders.Load()
		require.Equal(t, int32(1), h, "id %q: slot %d has keys on %d masters", id, slot, h)
	}
	redistest.FlushCluster(t, c)

	const n = 300
	l := lims[core.SlidingWindow]
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := l.AllowN(ctx, fmt.Sprint("user:", i), now, 1); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.FailNow(t, fmt.Sprintf("decision on the cluster: %v", err))
	}
	per := map[string]int64{}
	var mu sync.Mutex
	err := c.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		k, err := m.DBSize(ctx).Result()
		mu.Lock()
		per[m.Options().Addr] = k
		mu.Unlock()
		return err
	})
	require.NoError(t, err)
	t.Logf("%d identities over masters %v: %v", n, cl.Addrs(), per)
	var total int64
	for _, addr := range cl.Addrs() {
		assert.GreaterOrEqual(t, per[addr], int64(n/3/2), "master %s holds %d of %d identities, want a fair share", addr, per[addr], n)
		total += per[addr]
	}
	require.Equal(t, int64(n), total, "%d keys over the masters, want %d", total, n)
}
