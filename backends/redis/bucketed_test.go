package redis

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bucketedAlgorithms are the algorithms WithBuckets applies to.
var bucketedAlgorithms = []core.Algorithm{core.SlidingWindow, core.FixedWindow}

// TestWithBucketsBadCount: a bucket count below 0 or above MaxBuckets makes
// New fail with an error matching core.ErrInvalid; 0 keeps one key per
// identity; the sliding log and the token bucket keep their own keys
// whatever the count.
func TestWithBucketsBadCount(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}) // never dialled: New sends nothing
	t.Cleanup(func() { c.Close() })
	lim := core.PerWindow(10, time.Second)
	for _, n := range []int{-1, MaxBuckets + 1} {
		l, err := New(c, lim, WithBuckets(n))
		assert.Nil(t, l, "WithBuckets(%d): no limiter", n)
		assert.True(t, errors.Is(err, core.ErrInvalid), "WithBuckets(%d): error %v should match core.ErrInvalid", n, err)
	}
	for _, tc := range []struct {
		n    int
		algo core.Algorithm
		want bool
	}{
		{0, core.SlidingWindow, false}, {0, core.FixedWindow, false},
		{1, core.SlidingWindow, true}, {MaxBuckets, core.FixedWindow, true},
		{64, core.SlidingLog, false}, {64, core.TokenBucket, false},
	} {
		lim.Algorithm = tc.algo
		l, err := New(c, lim, WithBuckets(tc.n))
		require.NoError(t, err, "WithBuckets(%d) %s", tc.n, tc.algo)
		assert.Equal(t, tc.want, l.Bucketed(), "WithBuckets(%d) %s: Bucketed", tc.n, tc.algo)
		if !tc.want {
			assert.Empty(t, l.WindowKey("x", 0), "WithBuckets(%d) %s: no window key without buckets", tc.n, tc.algo)
		}
	}
}

// TestBucketOfSpreads: BucketOf is within [0, n), stable, and 100,000
// identities "user:N" over 1,250 buckets (80 each on average) leave no
// bucket above the 128 entries of a listpack-encoded hash nor below 40
// (the package doc's figures: 40 to 116).
func TestBucketOfSpreads(t *testing.T) {
	const ids, n = 100_000, 1250
	counts := make([]int, n)
	for i := 0; i < ids; i++ {
		id := "user:" + itoa(i)
		b := BucketOf(id, n)
		require.True(t, b >= 0 && b < n, "BucketOf(%q, %d) = %d outside [0, %d)", id, n, b, n)
		require.Equal(t, b, BucketOf(id, n), "BucketOf(%q) changed between calls", id)
		counts[b]++
	}
	lo, hi := ids, 0
	for _, k := range counts {
		lo, hi = min(lo, k), max(hi, k)
	}
	assert.LessOrEqual(t, hi, 128, "fullest bucket of %d identities over %d buckets", ids, n)
	assert.GreaterOrEqual(t, lo, 40, "emptiest bucket of %d identities over %d buckets", ids, n)
	assert.Equal(t, 0, BucketOf("anything", 1), "one bucket holds everyone")
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestBucketedKeysAndTTL: a decision writes its identity's count into the
// bucket's hash of its window (beside the newest-window flag), with the TTL of the per-identity layout
// (sliding: end of the next window; fixed: end of the window; plus the
// slack), the bucket's marker holds that window's number and outlives the
// hash, a peek writes nothing, and Reset removes the identity's fields
// while another identity of the bucket keeps its own.
func TestBucketedKeysAndTTL(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, slack := range []time.Duration{0, 5 * time.Second} {
		for _, a := range bucketedAlgorithms {
			require.NoError(t, c.FlushDB(ctx).Err())
			lim := core.Limit{Max: 10, Window: 30 * time.Second, Algorithm: a}
			l, err := New(c, lim, WithBuckets(1), WithExpirySlack(slack))
			require.NoError(t, err)
			start := time.Now()
			now := core.Millis(start)
			_, err = l.Peek(ctx, "ttl", start)
			require.NoError(t, err)
			require.Zero(t, dbsize(t, c), "%s: a peek on an empty bucket created keys", lim)

			_, err = l.AllowN(ctx, "ttl", start, 3)
			require.NoError(t, err)
			_, err = l.AllowN(ctx, "other", start, 2)
			require.NoError(t, err)
			hkey, mkey := l.WindowKey("ttl", now), BucketMarkerKey(DefaultPrefix, 0, Suffix(lim))
			assert.Equal(t, map[string]string{"ttl": "3", "other": "2", "": "0"}, c.HGetAll(ctx, hkey).Val(),
				"%s: the window hash %s holds each identity's count and the newest-window flag", lim, hkey)
			w := lim.WindowMillis()
			assert.Equal(t, itoa64(now/w), c.Get(ctx, mkey).Val(), "%s: the marker holds the newest window", lim)
			httl := c.PTTL(ctx, hkey).Val()
			elapsed := time.Since(start)
			want := expectedTTL(lim, now, 3) + slack
			assert.LessOrEqual(t, httl, want, "%s slack %s: window hash PTTL at most the doc's", lim, slack)
			assert.GreaterOrEqual(t, httl, want-elapsed-time.Millisecond, "%s slack %s: window hash PTTL less only the time elapsed (%s)", lim, slack, elapsed)
			// Absolute expiries (PEXPIRETIME), so the time between two reads counts for nothing.
			assert.GreaterOrEqual(t, c.PExpireTime(ctx, mkey).Val(), c.PExpireTime(ctx, hkey).Val(),
				"%s: the marker outlives the window hash", lim)

			// A peek writes nothing, not even on a live bucket.
			before := c.HGetAll(ctx, hkey).Val()
			_, err = l.Peek(ctx, "new", start)
			require.NoError(t, err)
			assert.Equal(t, before, c.HGetAll(ctx, hkey).Val(), "%s: a peek changed the window hash", lim)
			assert.Equal(t, int64(2), dbsize(t, c), "%s: keys after two identities in one bucket and window (hash, marker)", lim)

			require.NoError(t, l.Reset(ctx, "ttl"))
			assert.Equal(t, map[string]string{"other": "2", "": "0"}, c.HGetAll(ctx, hkey).Val(), "%s: Reset removes only its identity", lim)
			d, err := l.Peek(ctx, "ttl", start)
			require.NoError(t, err)
			assert.Equal(t, lim.Max, d.Remaining, "%s: the full quota after Reset", lim)
		}
	}
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// TestBucketedResetClearsPreviousWindow: after Reset the sliding window
// counter forgets the identity's previous window too (it would otherwise
// weigh on the estimate), on a bucket that holds other identities.
func TestBucketedResetClearsPreviousWindow(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	lim := core.PerWindow(10, time.Minute)
	l, err := New(c, lim, WithBuckets(1), WithExpirySlack(time.Hour))
	require.NoError(t, err)
	base := int64(1_700_000_040_000) // a window start for 1 min windows
	_, err = l.AllowN(ctx, "r", at(base+1_000), 10)
	require.NoError(t, err)
	_, err = l.AllowN(ctx, "keep", at(base+1_000), 4)
	require.NoError(t, err)
	d, err := l.Peek(ctx, "r", at(base+61_000))
	require.NoError(t, err)
	require.Equal(t, int64(1), d.Remaining, "precondition: 10 units in the previous window weigh 10 × 59/60 at 1 s into the next")
	require.NoError(t, l.Reset(ctx, "r"))
	d, err = l.Peek(ctx, "r", at(base+61_000))
	require.NoError(t, err)
	assert.True(t, d.Allowed, "after Reset")
	assert.Equal(t, int64(10), d.Remaining, "after Reset nothing of the previous window weighs")
	d, err = l.Peek(ctx, "keep", at(base+61_000))
	require.NoError(t, err)
	assert.Equal(t, int64(7), d.Remaining, "the other identity's 4 units weigh 4 × 59/60: ceil(10 − 3.93) = 7")
	require.NoError(t, l.Reset(ctx, "never-seen"), "Reset of an unknown identity")
}

// TestBucketedIdleBucketsLeaveNothing: with a 50 ms window and no expiry
// slack, every key of a bucket (window hashes and marker) expires by
// itself once its identities stop calling.
func TestBucketedIdleBucketsLeaveNothing(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		l, err := New(c, core.Limit{Max: 5, Window: 50 * time.Millisecond, Algorithm: a}, WithBuckets(4), WithExpirySlack(0))
		require.NoError(t, err)
		for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
			_, err := l.Allow(ctx, id)
			require.NoError(t, err)
		}
	}
	require.Positive(t, dbsize(t, c), "precondition: keys written")
	// Bounded only against a hang: the keys live at most 100 ms.
	require.Eventually(t, func() bool { return dbsize(t, c) == 0 }, 30*time.Second, 10*time.Millisecond,
		"every bucket key should expire by itself")
}

// TestBucketedHashStaysListpack: a window hash of 100 identities is
// listpack-encoded under hash-max-listpack-entries 128 (a setting some
// deployments choose; the default, compiled in and in Debian's
// redis.conf, is 512), and one of 129 is not: why buckets are sized for
// about 80 identities, which holds under either.
func TestBucketedHashStaysListpack(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	require.NoError(t, c.ConfigSet(ctx, "hash-max-listpack-entries", "128").Err())
	l, err := New(c, core.PerWindow(10, time.Hour), WithBuckets(1))
	require.NoError(t, err)
	now := time.Now()
	for _, tc := range []struct {
		ids  int
		want string
	}{{100, "listpack"}, {129, "hashtable"}} {
		require.NoError(t, c.FlushDB(ctx).Err())
		for i := 0; i < tc.ids; i++ {
			_, err := l.Allow(ctx, "user:"+itoa(i))
			require.NoError(t, err)
		}
		enc, err := c.ObjectEncoding(ctx, l.WindowKey("user:0", core.Millis(now))).Result()
		require.NoError(t, err)
		assert.Equal(t, tc.want, enc, "encoding of a window hash of %d identities", tc.ids)
	}
}

// TestBucketedAtomicity: 16 goroutines hammer 4 identities of one bucket
// at one instant, plain and pipelined; each identity gets exactly its
// limit. A decision whose read and write were not one atomic script (or a
// script touching another identity's field) would pass more or fewer.
func TestBucketedAtomicity(t *testing.T) {
	c, _ := redistest.Client(t)
	pool := goredis.NewClient(&goredis.Options{Addr: c.Options().Addr, PoolSize: 16})
	t.Cleanup(func() { pool.Close() })
	ctx := context.Background()
	ids := []string{"a", "b", "c", "d"}
	for _, a := range bucketedAlgorithms {
		for _, pipelined := range []bool{false, true} {
			opts := []Option{WithBuckets(1)}
			if pipelined {
				opts = append(opts, WithPipelining(100*time.Microsecond, 16))
			}
			l, err := New(pool, core.Limit{Max: 50, Window: time.Hour, Algorithm: a}, opts...)
			require.NoError(t, err)
			require.NoError(t, pool.FlushDB(ctx).Err())
			now := time.Now()
			var mu sync.Mutex
			admitted := map[string]int{}
			var wg sync.WaitGroup
			for g := 0; g < 16; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 20; i++ {
						id := ids[(g+i)%len(ids)]
						d, err := l.AllowN(ctx, id, now, 1)
						if !assert.NoError(t, err) {
							return
						}
						if d.Allowed {
							mu.Lock()
							admitted[id]++
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			for _, id := range ids {
				assert.Equal(t, 50, admitted[id], "%s pipelined=%v: %s admitted of 80 tries at limit 50", a, pipelined, id)
			}
		}
	}
}

// TestBucketedAllowEach: AllowEach on a bucketed limiter decides asks of
// identities sharing a bucket as core does one by one in slice order.
func TestBucketedAllowEach(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		lim := core.Limit{Max: 3, Window: time.Minute, Algorithm: a}
		l, err := New(c, lim, WithBuckets(2))
		require.NoError(t, err)
		now := time.Now()
		var asks []Ask
		for i := 0; i < 12; i++ {
			asks = append(asks, Ask{Key: []string{"p", "q", "r"}[i%3], Now: now, N: 1})
		}
		out := make([]core.Decision, len(asks))
		require.NoError(t, l.AllowEach(ctx, asks, out))
		states := map[string]*core.WindowState{"p": {}, "q": {}, "r": {}}
		for i, ask := range asks {
			want := decideCore(states[ask.Key], lim, core.Millis(now), 1, true)
			want.Source = core.SourceRedis
			assert.Equal(t, want, out[i], "%s ask %d (%s)", a, i, ask.Key)
		}
	}
}

// TestBucketedServerTime: under WithServerTime the bucketed scripts count
// in Redis' window, whatever now the caller passes.
func TestBucketedServerTime(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	l, err := New(c, core.PerWindow(5, time.Hour), WithBuckets(3), WithServerTime())
	require.NoError(t, err)
	before, err := c.Time(ctx).Result()
	require.NoError(t, err)
	_, err = l.AllowN(ctx, "st", time.UnixMilli(1_000), 2) // a caller clock in 1970
	require.NoError(t, err)
	after, err := c.Time(ctx).Result()
	require.NoError(t, err)
	found := false
	for _, ts := range []time.Time{before, after} {
		found = found || c.HExists(ctx, l.WindowKey("st", core.Millis(ts)), "st").Val()
	}
	assert.True(t, found, "the count sits in the hash of Redis' own window")
	assert.False(t, c.HExists(ctx, l.WindowKey("st", 1_000), "st").Val(), "nothing in the caller's 1970 window")
}

// TestMixedLayoutsCountApart: the bucketed layout neither reads nor writes
// the per-identity layout's keys, so during a rolling deploy that mixes
// them an identity is counted by each layout apart (up to its limit in
// each for the windows the deploy spans), as the package doc states.
func TestMixedLayoutsCountApart(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		lim := core.Limit{Max: 4, Window: time.Hour, Algorithm: a}
		old, err := New(c, lim, WithBuckets(0))
		require.NoError(t, err)
		bucketed, err := New(c, lim, WithBuckets(16))
		require.NoError(t, err)
		now := time.Now()
		admitted := 0
		for i := 0; i < 10; i++ {
			for _, l := range []*Limiter{old, bucketed} {
				d, err := l.AllowN(ctx, "mixed", now, 1)
				require.NoError(t, err)
				if d.Allowed {
					admitted++
				}
			}
		}
		assert.Equal(t, 8, admitted, "%s: limit 4 admitted once per layout", a)
		assert.Equal(t, int64(1), c.Exists(ctx, old.Key("mixed")).Val(), "%s: the old key is untouched", a)
	}
}

// TestBucketedUnavailable: with Redis unreachable, a bucketed limiter's
// decision is the fail-mode one with an error matching
// core.ErrUnavailable, and so is Reset's error.
func TestBucketedUnavailable(t *testing.T) {
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}) // nothing listens on port 1
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	for _, a := range bucketedAlgorithms {
		l, err := New(c, core.Limit{Max: 5, Window: time.Second, Algorithm: a}, WithBuckets(8), WithTimeout(time.Second))
		require.NoError(t, err)
		d, err := l.Allow(ctx, "u")
		assert.True(t, errors.Is(err, core.ErrUnavailable), "%s Allow: error %v should match core.ErrUnavailable", a, err)
		assert.Equal(t, core.SourceFailClosed, d.Source, "%s Allow: the fail-closed decision", a)
		assert.False(t, d.Allowed, "%s Allow: denied when closed", a)
		err = l.Reset(ctx, "u")
		assert.True(t, errors.Is(err, core.ErrUnavailable), "%s Reset: error %v should match core.ErrUnavailable", a, err)
		err = l.Reset(ctx, "")
		assert.True(t, errors.Is(err, core.ErrInvalid), "%s Reset of an empty key: error %v should match core.ErrInvalid", a, err)
	}
}
