package budget

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnnounceAheadCountsBoundedWindows: in production every call runs on
// Redis' clock (window w) while a PoP announces from its own (x+3). The
// script counts an announcement no further than w+4, so one call of a PoP
// whose clock runs far ahead does a bounded amount of work (it counted
// every window from w−1 to the PoP's x+3: 10,005 windows, one HMGET and
// one HSET each, in one call, at 100 s of skew and 10 ms windows), and its
// reply's lease names only the windows Redis counted, so the PoP spends no
// free credit in a window Redis does not reserve for it. Time runs on the
// calls' own clocks (Redis' now given to the script, the Machine's to
// Tick and Request). Mutations it catches (each tried on lua/budget.lua):
// no clamp (10,005 fields in the fc hash); the clamp on the counting
// loop only, with the reply and the 'fa' record still saying the PoP's
// x+3 (its lease covers its own window: it spends free credit there,
// uncounted); the announcement's expiries from the unclamped window (the
// fa key and the fc hash kept until the PoP's future); the clamp at w+3
// (a PoP a window ahead, within the clocks' rule, loses the window three
// ahead of its own and renews at every call).
func TestAnnounceAheadCountsBoundedWindows(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const win = 10     // ms
	const slack = 2000 // ms: the keys outlive a slow test run
	newPoP := func(inc uint64) *Machine {
		m, err := NewMachine(Config{PoP: "skewed", Incarnation: inc, Limit: core.PerWindow(100, win*time.Millisecond),
			PoPs: 2, FreeCredit: 1, Groups: 1, Buckets: 4, ExpirySlack: slack * time.Millisecond})
		require.NoError(t, err)
		return m
	}
	// run runs m's Tick at the PoP's time pop, its one call at Redis' time
	// redisNow, and hands the reply back to m
	run := func(m *Machine, pop, redisNow int64) *Result {
		t.Helper()
		calls := m.Tick(pop)
		require.Len(t, calls, 1, "one group: one batch, the lease due")
		require.Equal(t, m.window(pop)+3, calls[0].announce, "the PoP announces its own window + 3")
		res, errs := ExecAll(ctx, rdb, m, calls, redisNow)
		require.NoError(t, errs[0])
		m.Finish(calls[0], res[0], errs[0])
		return res[0]
	}
	// counted returns the windows the group's fc hash counts
	counted := func(m *Machine) []int64 {
		t.Helper()
		fields, err := rdb.HKeys(ctx, m.tag(0)+":fc").Result()
		require.NoError(t, err)
		var xs []int64
		for _, f := range fields {
			if x, err := strconv.ParseInt(f, 10, 64); err == nil { // not an 'm<x>' record
				xs = append(xs, x)
			}
		}
		return xs
	}

	t.Run("100 s ahead", func(t *testing.T) {
		require.NoError(t, rdb.FlushAll(ctx).Err())
		m := newPoP(9)
		redisNow := int64(100_000_000)*win + 3 // Redis' clock, 3 ms into window w
		w := redisNow / win
		pop := redisNow + 100_000 // the PoP's: 100 s (10,000 windows) ahead
		x := m.window(pop)

		r := run(m, pop, redisNow)
		xs := counted(m)
		assert.LessOrEqual(t, len(xs), 6, "one call counts w−1 .. w+4 at most, whatever the PoP's clock says")
		assert.LessOrEqual(t, slices.Max(xs), w+4, "no window past Redis' w+4 is counted")
		assert.Equal(t, w+4, r.Leased, "the reply's lease ends where Redis' count does")
		assert.Equal(t, w-1, r.LeasedFrom, "a new lease starts at w−1")
		assert.Zero(t, m.credit(x, 0), "the PoP's own window is not covered: Redis did not count it")
		d, c := m.Request(pop+1, "k", 1)
		assert.NotNil(t, c, "the PoP asks Redis instead of spending free credit Redis does not reserve")
		assert.NotEqual(t, SrcFree, d.Source)

		// what the announcement keeps expires with the windows counted
		// (R_{w+4} weighs until window w+5 ends), not with the PoP's x+3
		limit := (w+6)*win - redisNow + slack
		for _, k := range []string{m.tag(0) + ":fc", m.tag(0) + ":fa:" + strconv.FormatUint(9, 16)} {
			ttl, err := rdb.PTTL(ctx, k).Result()
			require.NoError(t, err)
			assert.Positive(t, ttl, "%s expires", k)
			assert.LessOrEqual(t, ttl.Milliseconds(), limit, "%s expires when R of the last window counted stops weighing", k)
		}

		// the lease stays due (the PoP's x+3 is not reached): its next
		// call, with Redis a window on, counts one window more
		r = run(m, pop+win, redisNow+win)
		assert.Equal(t, w+5, r.Leased)
		assert.LessOrEqual(t, len(counted(m)), 7, "each call counts a bounded number of windows")
	})

	t.Run("one window ahead", func(t *testing.T) {
		require.NoError(t, rdb.FlushAll(ctx).Err())
		m := newPoP(10)
		redisNow := int64(100_000_000)*win + 8 // 8 ms into window w
		w := redisNow / win
		pop := redisNow + 4 // the PoP's clock 4 ms ahead: already in w+1
		x := m.window(pop)
		require.Equal(t, w+1, x)
		r := run(m, pop, redisNow)
		assert.Equal(t, x+3, r.Leased, "a PoP a window ahead is counted through its x+3, as before")
		assert.Equal(t, m.cfg.FreeCredit, m.credit(x+3, 0))
		assert.Empty(t, m.Tick(pop+1), "its lease is not due again within its window")
	})
}

// guardHorizon is how long after a guarded call first ran at Redis a
// go-redis client (v9, default options) may still deliver a retry of it:
// MaxRetries 3, each after the previous attempt's ReadTimeout (5 s), a
// backoff (at most MaxRetryBackoff, 1 s), a wait for a connection
// (PoolTimeout, 6 s), a dial (DialerRetries 5 attempts of DialTimeout,
// 5 s, 100 ms apart) and a write (WriteTimeout, 5 s): 3 × 42.4 s, and
// the new connection's handshake replies on top: 130 s.
const guardHorizon = 130 * time.Second

// TestResetRetryAfterFourWindowsAppliedOnce: a call's retry guard (the
// Resets' 'rseq', the decision reports' 'dseq', the batches' 'seq')
// outlives a client's retries even where four windows plus the expiry
// slack are shorter (250 ms windows and 10 s of slack, which keeps the
// bucket hashes through a slow test run: the guards lived 11 s). A
// Reset's op forgets C of whatever window it runs in, so a retry of it
// that came after its guard expired forgot what the PoPs admitted since: 20 units of a limit of 10 in one window. The guard's
// expiry is read (PTTL), not waited for: the retry runs on Redis' clock
// the horizon after the Reset, and a guard whose PTTL says it would have
// expired by then is deleted first. Mutations it catches (each tried on
// lua/budget.lua): the guards' TTL back to 4W + slack (every guard's PTTL
// is short; the retry forgets the admissions again), a floor under the
// horizon, the floor on the anti-replay guards only or on the batches'
// only, the floor replacing 4W + slack for long windows (their guards
// then end before the window they guard).
func TestResetRetryAfterFourWindowsAppliedOnce(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	const win = 250 // ms
	cfg := func(pop string, inc uint64, window time.Duration) Config {
		return Config{PoP: pop, Incarnation: inc, Limit: core.PerWindow(10, window),
			PoPs: 2, FreeCredit: -1, Groups: 1, Buckets: 4, ExpirySlack: 10 * time.Second}
	}
	inc := uint64(100)
	// fill asks Redis, at Redis' time now, for n units of "k" from a fresh
	// PoP incarnation (no view in the way)
	fill := func(now, n int64) bool {
		t.Helper()
		inc++
		b, err := NewMachine(cfg("b", inc, win*time.Millisecond))
		require.NoError(t, err)
		_, c := b.Request(now, "k", n)
		require.NotNil(t, c, "no budget here: Redis decides")
		r, err := Exec(ctx, rdb, b, c, now)
		require.NoError(t, err)
		return b.Complete(now, c, r, nil).Allowed
	}
	pttl := func(key string) time.Duration {
		t.Helper()
		ttl, err := rdb.PTTL(ctx, key).Result()
		require.NoError(t, err)
		require.Positive(t, ttl, "%s is set and expires", key)
		return ttl
	}

	t.Run("Reset", func(t *testing.T) {
		require.NoError(t, rdb.FlushAll(ctx).Err())
		a, err := NewMachine(cfg("a", 1, win*time.Millisecond))
		require.NoError(t, err)
		t0 := int64(4_000_000)*win + 10
		require.True(t, fill(t0, 10), "Max admitted at Redis")
		rc := a.Reset(t0+1, "k")
		require.NotNil(t, rc)
		r1, err := Exec(ctx, rdb, a, rc, t0+1)
		require.NoError(t, err)
		require.False(t, r1.Retried, "the Reset is applied")
		a.ResetDone(rc, nil)

		guard := a.tag(0) + ":rseq:" + strconv.FormatUint(1, 16)
		ttl := pttl(guard)
		assert.Greater(t, ttl, guardHorizon, "the Reset's guard outlives a client's retries")
		if ttl <= guardHorizon {
			require.NoError(t, rdb.Del(ctx, guard).Err()) // gone when the retry comes
		}
		// the horizon later on Redis' clock, 10 ms into a window: the PoPs
		// fill the identity, the Reset's retry lands, they ask again
		t1 := (t0+guardHorizon.Milliseconds())/win*win + win + 10
		require.True(t, fill(t1, 10), "Max admitted in the retry's window")
		r2, err := Exec(ctx, rdb, a, rc, t1+1) // the same KEYS and ARGV a client's retry sends
		require.NoError(t, err)
		assert.True(t, r2.Retried, "a Reset's retry is applied at most once")
		assert.False(t, fill(t1+2, 10), "20 units of a limit of 10 in one window")
	})

	t.Run("every guard", func(t *testing.T) {
		for _, tc := range []struct {
			window time.Duration
			least  time.Duration // the guard's PTTL is above it
			most   time.Duration // and at most this
		}{
			{win * time.Millisecond, guardHorizon, time.Hour},
			// a long window keeps 4W + slack: a report's windows are not
			// stale before that
			{100 * time.Second, 410*time.Second - 100*time.Millisecond, 410 * time.Second},
		} {
			require.NoError(t, rdb.FlushAll(ctx).Err())
			a, err := NewMachine(cfg("a", 2, tc.window))
			require.NoError(t, err)
			W := tc.window.Milliseconds()
			now := int64(4_000_000)*W + 10
			x := now / W
			// a batch (its high-water mark), a decision carrying a report
			// (the anti-replay window), a Reset (the same, its own sequence)
			a.Request(now, "k", 1) // an entry for the Tick to top up
			calls := a.Tick(now + 1)
			require.Len(t, calls, 1, "one batch")
			dec := &Call{Group: 0, Seq: 1, Now: now, hotWin: -1, guard: "dseq",
				Items: []Item{{Key: "d", Bucket: a.bucket("d"), N: 1, Claims: []int64{x}}}}
			rc := a.Reset(now+2, "r")
			require.NotNil(t, rc)
			for _, c := range []*Call{calls[0], dec, rc} {
				r, err := Exec(ctx, rdb, a, c, now+3)
				require.NoError(t, err)
				require.False(t, r.Retried)
			}
			for _, g := range []string{"seq", "dseq", "rseq"} {
				key := a.tag(0) + ":" + g + ":" + strconv.FormatUint(2, 16)
				ttl := pttl(key)
				assert.Greater(t, ttl, tc.least, "window %v: the %s guard outlives a client's retries and the windows it guards", tc.window, g)
				assert.LessOrEqual(t, ttl, tc.most, "window %v: the %s guard", tc.window, g)
			}
		}
	})
}

// TestFirstCountRecordsFarWindows: the first count holds however large
// the window number: PoP A, configured as if alone, fills an identity at
// Redis in window 10^14 + 5 (1 ms windows, a caller's clock in the year
// 5138; every call at the same instant), then B, configured alike, is
// counted: its lease starts three windows ahead and its request asks
// Redis. The script names a window's first-count record 'm<window>' in
// decimal digits; the announcement's count read it by concatenating the
// number, 'm1.0000000000001e+14' from 10^14, so it never found the record
// the checks wrote, and B's lease covered its window: its free unit was
// the 11th of a limit of 10. Caught mutation: the record's name
// concatenated in the count's read (B's lease starts at once).
func TestFirstCountRecordsFarWindows(t *testing.T) {
	rdb, _ := redistest.Client(t)
	exec := func(m *Machine, c *Call) (*Result, error) { return Exec(context.Background(), rdb, m, c, c.Now) }
	pop := func(name string, inc uint64) *Machine {
		m, err := NewMachine(Config{PoP: name, Incarnation: inc, Limit: core.PerWindow(10, time.Millisecond), PoPs: 1, FreeCredit: 1, ExpirySlack: time.Hour})
		require.NoError(t, err)
		return m
	}
	now := int64(100_000_000_000_005) // ms, window 10^14 + 5
	a, b := pop("a", 1), pop("b", 2)
	takeLease(t, rdb, a, now)
	admitted := 0
	for range 20 {
		if decideAt(t, a, "k", now, exec).Allowed {
			admitted++
		}
	}
	require.Equal(t, 10, admitted, "A alone is admitted the limit")
	takeLease(t, rdb, b, now)
	assert.Equal(t, now+3, b.groups[0].leasedFrom, "B's lease starts three windows ahead")
	d := decideAt(t, b, "k", now, exec)
	assert.NotEqual(t, SrcFree, d.Source, "B's request is no free unit")
	assert.False(t, d.Allowed, "A and B admit the limit together, not one more")
}
