package budget

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func usedMemory(tb testing.TB, rdb *redis.Client) int64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	require.NoError(tb, err)
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(tb, err)
			return n
		}
	}
	tb.Fatal("INFO memory has no used_memory")
	return 0
}

// writeContested writes, as 8 PoPs' Sync batches, the live state of a
// contested identity (C and G in the previous and current windows, K of
// the next) for ids identities.
func writeContested(tb testing.TB, rdb *redis.Client, ids int) {
	tb.Helper()
	const pops = 8
	ctx := context.Background()
	w := int64(2000)
	for p := range pops {
		m, err := NewMachine(Config{PoP: fmt.Sprint(p), Incarnation: uint64(p + 1), Limit: core.PerWindow(100, testWindow*time.Millisecond),
			PoPs: pops, Buckets: ids / 100, ExpirySlack: time.Hour})
		require.NoError(tb, err)
		batches := map[int]*Call{}
		for i := p; i < ids; i += pops { // each identity is written by one PoP per window, every PoP's batches alike
			key := "id" + strconv.Itoa(i)
			bk := m.bucket(key)
			g := m.group(bk)
			if batches[g] == nil {
				batches[g] = &Call{Group: g, Seq: uint64(1)}
			}
			batches[g].Items = append(batches[g].Items, Item{Key: key, Bucket: bk, Want: 3, Claims: []int64{w + 1},
				Ops: []Op{{X: w - 1, GW: GWFree, U: 1}, {X: w, GW: w - 1, U: 2}}})
		}
		for _, c := range batches {
			for len(c.Items) > 0 {
				part := &Call{Group: c.Group, Seq: c.Seq, Items: c.Items[:min(len(c.Items), 500)]}
				c.Items = c.Items[len(part.Items):]
				c.Seq++
				_, err := Exec(ctx, rdb, m, part, w*testWindow+100)
				require.NoError(tb, err)
			}
		}
	}
}

// BenchmarkRedisBytesPerIdentity measures Redis' used_memory grown per
// identity when 100,000 identities each hold the live state of a contested
// identity (C and G in the previous and current windows, K of the next),
// written by 8 PoPs' Sync batches: the metric B/identity.
func BenchmarkRedisBytesPerIdentity(b *testing.B) {
	const ids = 100_000
	rdb, _ := redistest.Client(b)
	ctx := context.Background()
	for b.Loop() {
		require.NoError(b, rdb.FlushAll(ctx).Err())
		before := usedMemory(b, rdb)
		writeContested(b, rdb, ids)
		b.ReportMetric(float64(usedMemory(b, rdb)-before)/ids, "B/identity")
	}
}

// TestRedisBytesPerIdentity holds the layout to at most 64 B of Redis
// memory per contested identity (50,000 of them, written as in
// BenchmarkRedisBytesPerIdentity) and checks every key written expires.
func TestRedisBytesPerIdentity(t *testing.T) {
	const ids = 50_000
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	before := usedMemory(t, rdb)
	writeContested(t, rdb, ids)
	per := float64(usedMemory(t, rdb)-before) / ids
	t.Logf("%.1f B/identity", per)
	assert.LessOrEqual(t, per, 64.0, "Redis bytes per contested identity")
	keys, err := rdb.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.NotEmpty(t, keys, "the batches wrote keys")
	for _, k := range keys {
		ttl, err := rdb.PTTL(ctx, k).Result()
		require.NoError(t, err)
		assert.Positive(t, ttl, "key %s expires", k)
	}
}

// BenchmarkViewBytesPerIdentity measures a Machine's heap per identity
// after one request of each of 100,000 identities (metric B/identity):
// "light", on free credit (one unit, the lease granted: a light record
// each), and "full", without free credit (a full entry each, its decision
// Call planned and not sent).
func BenchmarkViewBytesPerIdentity(b *testing.B) {
	const ids = 100_000
	keys := make([]string, ids)
	for i := range keys {
		keys[i] = "id" + strconv.Itoa(i)
	}
	for _, tc := range []struct {
		name   string
		credit int64
	}{{"light", 1}, {"full", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				m, err := NewMachine(Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(100, testWindow*time.Millisecond), PoPs: 8, FreeCredit: tc.credit})
				require.NoError(b, err)
				leaseAll(m)
				for _, k := range keys {
					m.Request(w0, k, 1)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				require.Equal(b, ids, m.Len())
				require.Equal(b, tc.credit < 0, len(m.view) == ids, "%s: full entries exactly when there is no free credit", tc.name)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/ids, "B/identity")
				runtime.KeepAlive(m)
			}
		})
	}
}
