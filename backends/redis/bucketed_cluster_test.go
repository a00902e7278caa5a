package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBucketedCluster: on a real three-master Redis Cluster, a bucket's
// keys (marker and window hashes) share one slot, 64 buckets spread over
// all three masters, and decisions, a clock-back search (which reads window
// hashes the call did not declare, in the declared key's slot), peeks and
// Reset all run without CROSSSLOT or non-local-key errors and agree with
// core.
func TestBucketedCluster(t *testing.T) {
	c, _ := redistest.Cluster(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		redistest.FlushCluster(t, c)
		lim := core.Limit{Max: 3, Window: time.Second, Algorithm: a}
		l, err := New(c, lim, WithBuckets(64), WithExpirySlack(time.Hour))
		require.NoError(t, err)
		base := core.Millis(time.Now())
		states := map[string]*core.WindowState{}
		step := func(id string, now, n int64, why string) {
			t.Helper()
			st := states[id]
			if st == nil {
				st = &core.WindowState{}
				states[id] = st
			}
			want := decideCore(st, lim, now, n, true)
			want.Source = core.SourceRedis
			got, err := l.AllowN(ctx, id, at(now), n)
			require.NoError(t, err, "%s %s: %s", a, id, why)
			assert.Equal(t, want, got, "%s %s: %s", a, id, why)
		}
		for i := 0; i < 300; i++ {
			step("user:"+itoa(i), base+2_000, 1, "window +2")
		}
		for i := 0; i < 300; i += 7 {
			step("user:"+itoa(i), base+5_000, 3, "window +5")
			step("user:"+itoa(i), base+3_000, 1, "clock back to window +3: decided in +5")
		}
		// Every bucket's keys share a slot; the buckets cover every master.
		masters := map[string]bool{}
		for b := 0; b < 64; b++ {
			mkey := BucketMarkerKey(DefaultPrefix, b, Suffix(lim))
			slot := c.ClusterKeySlot(ctx, mkey).Val()
			for _, j := range []int64{(base + 2_000) / 1000, (base + 5_000) / 1000} {
				assert.Equal(t, slot, c.ClusterKeySlot(ctx, BucketWindowKey(DefaultPrefix, b, Suffix(lim), j)).Val(),
					"%s bucket %d: window %d's hash in the marker's slot", a, b, j)
			}
			m, err := c.MasterForKey(ctx, mkey)
			require.NoError(t, err)
			masters[m.Options().Addr] = true
		}
		assert.Len(t, masters, 3, "%s: 64 buckets over the three masters", a)
		var mu sync.Mutex
		holders := 0
		require.NoError(t, c.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
			n, err := m.DBSize(ctx).Result()
			if n > 0 {
				mu.Lock()
				holders++
				mu.Unlock()
			}
			return err
		}))
		assert.Equal(t, 3, holders, "%s: every master holds bucket keys", a)

		d, err := l.Peek(ctx, "user:0", at(base+5_000))
		require.NoError(t, err)
		assert.False(t, d.Allowed, "%s: user:0 spent window +5", a)
		require.NoError(t, l.Reset(ctx, "user:0"))
		d, err = l.Peek(ctx, "user:0", at(base+5_000))
		require.NoError(t, err)
		assert.Equal(t, lim.Max, d.Remaining, "%s: the full quota after Reset on the cluster", a)
	}
}
