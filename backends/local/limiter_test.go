package local

import (
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clocktest"
	"github.com/edgelimit/edgelimit/internal/keybuf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHotPathAllocatesNothing: a decision on a key already held allocates
// nothing, allowed or denied, for every algorithm, through Allow too.
func TestHotPathAllocatesNothing(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		clk := core.NewManualClock(epoch)
		l := mustNew(t, core.Limit{Max: 50, Window: time.Second, Algorithm: a}, WithClock(clk))
		key := strings.Clone("user:42")
		now := epoch
		allowed := testing.AllocsPerRun(1000, func() {
			now = now.Add(100 * time.Millisecond) // stays under the limit
			mustAllow(t, l, key, now, 1)
		})
		denied := testing.AllocsPerRun(1000, func() {
			mustAllow(t, l, key, now, 50) // the key holds counts: denied
		})
		viaAllow := testing.AllocsPerRun(1000, func() {
			clk.Advance(100 * time.Millisecond)
			l.Allow(ctx, key)
		})
		peek := testing.AllocsPerRun(1000, func() { l.Peek(ctx, key, now) })
		require.Equal(t, float64(0), allowed, "allocs per call: allowed %v, denied %v, Allow %v, Peek %v; want 0", allowed, denied, viaAllow, peek)
		require.Equal(t, float64(0), denied, "allocs per call: allowed %v, denied %v, Allow %v, Peek %v; want 0", allowed, denied, viaAllow, peek)
		require.Equal(t, float64(0), viaAllow, "allocs per call: allowed %v, denied %v, Allow %v, Peek %v; want 0", allowed, denied, viaAllow, peek)
		require.Equal(t, float64(0), peek, "allocs per call: allowed %v, denied %v, Allow %v, Peek %v; want 0", allowed, denied, viaAllow, peek)
	})
}

// TestBadInputCreatesNothing: bad keys, weights and times (before the Unix
// epoch) return typed errors that match core.ErrInvalid, and create no
// entry.
func TestBadInputCreatesNothing(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 10, Window: time.Minute, Algorithm: a})
		mustAllow(t, l, "present", epoch, 1)
		cases := []struct {
			key  string
			n    int64
			want error
		}{
			{"", 1, core.ErrEmptyKey},
			{strings.Repeat("k", core.MaxKeyLen+1), 1, core.ErrKeyTooLong},
			{"fresh", 0, core.ErrBadWeight},
			{"fresh", -3, core.ErrBadWeight},
			{"fresh", 11, core.ErrBadWeight},
			{"present", 11, core.ErrBadWeight},
		}
		for _, c := range cases {
			d, err := l.AllowN(ctx, c.key, epoch, c.n)
			require.ErrorIs(t, err, c.want, "AllowN(len %d, %d) = %+v, %v; want denied and %v", len(c.key), c.n, d, err, c.want)
			require.ErrorIs(t, err, core.ErrInvalid, "AllowN(len %d, %d) = %+v, %v; want denied and %v", len(c.key), c.n, d, err, c.want)
			require.False(t, d.Allowed, "AllowN(len %d, %d) = %+v, %v; want denied and %v", len(c.key), c.n, d, err, c.want)
		}
		_, err := l.Peek(ctx, "", epoch)
		require.ErrorIs(t, err, core.ErrEmptyKey, "Peek(\"\"): %v", err)
		_, err = l.AllowN(ctx, "fresh", time.Time{}, 1)
		require.ErrorIs(t, err, core.ErrBadTime, "AllowN at the zero time: %v", err)
		_, err = l.Peek(ctx, "fresh", time.Unix(-1, 0))
		require.ErrorIs(t, err, core.ErrBadTime, "Peek before the epoch: %v", err)
		_, err = l.AllowN(ctx, "fresh", time.UnixMilli(core.MaxMillis+1), 1)
		require.ErrorIs(t, err, core.ErrBadTime, "AllowN past core.MaxMillis: %v", err)
		err = l.Reset(ctx, strings.Repeat("k", core.MaxKeyLen+1))
		require.ErrorIs(t, err, core.ErrKeyTooLong, "Reset(long): %v", err)
		require.Equal(t, 1, l.Len(), "Len() = %d after bad input, want 1", l.Len())
		st, _ := l.State("present")
		require.False(t, st.Window.Cur+st.Log.Units == 0 && st.Bucket.TAT == 0, "the present key lost its state")
	})
}

// TestNewRejects: invalid limits and options are typed errors.
func TestNewRejects(t *testing.T) {
	good := core.PerWindow(10, time.Second)
	cases := []struct {
		name string
		l    core.Limit
		opts []Option
		want error
	}{
		{"zero max", core.PerWindow(0, time.Second), nil, core.ErrBadLimit},
		{"short window", core.PerWindow(10, time.Microsecond), nil, core.ErrBadWindow},
		{"algorithm", core.Limit{Max: 1, Window: time.Second, Algorithm: 9}, nil, core.ErrBadAlgorithm},
		{"capacity", good, []Option{WithCapacity(0)}, core.ErrInvalid},
		{"shards", good, []Option{WithShards(48)}, core.ErrInvalid},
		{"zero shards", good, []Option{WithShards(0)}, core.ErrInvalid},
		{"clock", good, []Option{WithClock(nil)}, core.ErrInvalid},
		{"monotonic", good, []Option{WithMonotonic(nil)}, core.ErrInvalid},
	}
	for _, c := range cases {
		_, err := New(c.l, c.opts...)
		if assert.ErrorIs(t, err, c.want, "%s: err %v, want %v", c.name, err, c.want) {
			assert.ErrorIs(t, err, core.ErrInvalid, "%s: err %v, want %v", c.name, err, c.want)
		}
	}
}

// TestPeekDoesNotSpend: any number of peeks leave the quota and store as
// they were; a peek of an unknown key stores nothing.
func TestPeekDoesNotSpend(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 3, Window: time.Minute, Algorithm: a})
		for i := 0; i < 10; i++ {
			d, _ := l.Peek(ctx, "k", epoch)
			require.True(t, d.Allowed, "Peek on a fresh key = %+v, want allowed with 3 remaining", d)
			require.Equal(t, int64(3), d.Remaining, "Peek on a fresh key = %+v, want allowed with 3 remaining", d)
		}
		require.Equal(t, 0, l.Len(), "Peek stored an entry: Len() = %d", l.Len())
		mustAllow(t, l, "k", epoch, 2)
		for i := 0; i < 10; i++ {
			d, _ := l.Peek(ctx, "k", epoch)
			require.True(t, d.Allowed, "Peek after 2 of 3 = %+v, want allowed with 1 remaining", d)
			require.Equal(t, int64(1), d.Remaining, "Peek after 2 of 3 = %+v, want allowed with 1 remaining", d)
		}
		d := mustAllow(t, l, "k", epoch, 1)
		require.True(t, d.Allowed, "third unit = %+v, want allowed with 0 remaining", d)
		require.Equal(t, int64(0), d.Remaining, "third unit = %+v, want allowed with 0 remaining", d)
	})
}

// TestResetForgets: after Reset the full quota is back and the entry gone;
// resetting an unknown key is fine.
func TestResetForgets(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 2, Window: time.Minute, Algorithm: a})
		mustAllow(t, l, "k", epoch, 2)
		d := mustAllow(t, l, "k", epoch, 1)
		require.False(t, d.Allowed, "third unit of 2 allowed")
		err := l.Reset(ctx, "k")
		require.NoError(t, err)
		err = l.Reset(ctx, "never-seen")
		require.NoError(t, err)
		_, ok := l.State("k")
		require.False(t, ok, "after Reset: held %v, Len() %d", ok, l.Len())
		require.Equal(t, 0, l.Len(), "after Reset: held %v, Len() %d", ok, l.Len())
		d = mustAllow(t, l, "k", epoch, 2)
		require.True(t, d.Allowed, "full quota not back after Reset")
		require.Equal(t, uint64(0), l.Evictions(), "Reset counted as eviction: %d", l.Evictions())
	})
}

// nowOnly hides ManualClock's UnixMilli: a Clock that is no MilliClock.
type nowOnly struct{ c *core.ManualClock }

func (n nowOnly) Now() time.Time { return n.c.Now() }

// TestAllowUsesClock: Allow reads the Clock option, through UnixMilli for a
// core.MilliClock whose UnixMilli agrees with its Now, and through Now for
// any other Clock, including one that embeds a MilliClock but overrides Now.
func TestAllowUsesClock(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		t.Run("MilliClock", func(t *testing.T) {
			clk := &clocktest.Counting{ManualClock: core.NewManualClock(epoch)}
			l := mustNew(t, core.Limit{Max: 1, Window: time.Minute, Algorithm: a}, WithClock(clk))
			before := clk.Reads()
			allowUsesClock(t, l, clk.ManualClock, 0)
			n := clk.Reads() - before
			require.Equal(t, int64(3), n, "3 Allow calls read UnixMilli %d times, want 3", n)
		})
		t.Run("Clock", func(t *testing.T) {
			clk := core.NewManualClock(epoch)
			l := mustNew(t, core.Limit{Max: 1, Window: time.Minute, Algorithm: a}, WithClock(nowOnly{clk}))
			allowUsesClock(t, l, clk, 0)
		})
		t.Run("embedded MilliClock, Now overridden", func(t *testing.T) {
			clk := core.NewManualClock(epoch)
			skewed := clocktest.Skewed{ManualClock: clk, Skew: time.Hour}
			l := mustNew(t, core.Limit{Max: 1, Window: time.Minute, Algorithm: a}, WithClock(skewed))
			allowUsesClock(t, l, clk, time.Hour)
		})
	})
}

// allowUsesClock runs three Allow calls on l, whose clock reads clk plus
// skew, and checks each against that time: admitted, denied at the same
// time, admitted RetryAfter later; then that the quota is spent at the
// clock's time (epoch + skew), where Allow must have counted it.
func allowUsesClock(t *testing.T, l *Limiter, clk *core.ManualClock, skew time.Duration) {
	t.Helper()
	if d, _ := l.Allow(ctx, "k"); !d.Allowed {
		require.FailNow(t, "first Allow denied")
	}
	d, _ := l.Allow(ctx, "k")
	require.False(t, d.Allowed, "second Allow at the same clock time admitted")
	clk.Advance(d.RetryAfter)
	d, _ = l.Allow(ctx, "k")
	require.True(t, d.Allowed, "Allow after the clock moved by RetryAfter %v denied", d.RetryAfter)
	d, _ = l.Peek(ctx, "k", epoch.Add(skew))
	require.False(t, d.Allowed, "Peek at the clock's time (epoch + %v) should see the spent quota", skew)
}

// TestStateCopies: State returns the algorithm's counters as a copy.
func TestStateCopies(t *testing.T) {
	now := epoch.Add(1500 * time.Millisecond)
	sliding := mustNew(t, core.PerWindow(10, time.Second))
	mustAllow(t, sliding, "k", now, 4)
	st, ok := sliding.State("k")
	require.True(t, ok, "sliding State = %+v, %v", st, ok)
	require.Equal(t, core.WindowState{Index: core.Millis(now) / 1000, Cur: 4}, st.Window, "sliding State = %+v, %v", st, ok)
	log := mustNew(t, core.Limit{Max: 10, Window: time.Second, Algorithm: core.SlidingLog})
	mustAllow(t, log, "k", now, 2)
	st, _ = log.State("k")
	st.Log.Entries[0] = core.LogEntry{} // a copy: the stored log is unchanged
	st2, _ := log.State("k")
	require.Equal(t, core.LogState{Entries: []core.LogEntry{{At: core.Millis(now), N: 2}}, Units: 2}, st2.Log, "log State = %+v", st2)
	bucket := mustNew(t, core.Limit{Max: 10, Window: time.Second, Algorithm: core.TokenBucket})
	mustAllow(t, bucket, "k", now, 1)
	st, _ = bucket.State("k")
	require.Equal(t, core.Millis(now)*1000+100_000, st.Bucket.TAT, "bucket State = %+v", st)
	_, ok = bucket.State("absent")
	require.False(t, ok, "State of an absent key reported held")
}

// TestDistinctKeysNeverShare: keys differing in any byte have their own
// state.
func TestDistinctKeysNeverShare(t *testing.T) {
	l := mustNew(t, core.PerWindow(1, time.Minute))
	for _, k := range []string{"a", "a ", "A", "a\x00", "{a}", "a:b", "é", "\xff"} {
		d := mustAllow(t, l, k, epoch, 1)
		require.True(t, d.Allowed, "key %q shared state with an earlier key", k)
	}
}

// TestDefaultShards: a power of two with room for every core.
func TestDefaultShards(t *testing.T) {
	n := DefaultShards()
	require.Equal(t, 0, n&(n-1), "DefaultShards() = %d", n)
	require.GreaterOrEqual(t, n, runtime.GOMAXPROCS(0), "DefaultShards() = %d", n)
	require.LessOrEqual(t, n, 256, "DefaultShards() = %d", n)
	st := mustNew(t, core.PerWindow(1, time.Minute)).eng.(*store[core.WindowState])
	require.Len(t, st.shards, n, "New uses %d shards, want %d", len(st.shards), n)
}

// TestShardPadding: shards are at least 128 bytes apart whatever the state
// type, so neighbouring shard locks do not false-share.
func TestShardPadding(t *testing.T) {
	sizes := []uintptr{unsafe.Sizeof(shard[core.WindowState]{}), unsafe.Sizeof(shard[core.BucketState]{}), unsafe.Sizeof(shard[*core.LogState]{})}
	for _, s := range sizes {
		require.GreaterOrEqual(t, s, uintptr(128), "shard sizes %v: one is below 128 bytes", sizes)
	}
}

// TestStoredKeyIsACopy: the store keeps its own copy of every key, inline in
// the slot (up to keybuf.Inline bytes) or cloned (longer), so a caller that
// reuses its buffer (a zero-copy string over request bytes, as fasthttp
// users write) changes nothing stored. Lengths straddle the inline size.
func TestStoredKeyIsACopy(t *testing.T) {
	for _, size := range []int{1, keybuf.Inline - 1, keybuf.Inline, keybuf.Inline + 1, core.MaxKeyLen} {
		l := mustNew(t, core.PerWindow(10, time.Minute))
		buf := []byte(strings.Repeat("k", size))
		want := string(buf) // an independent copy of the key
		mustAllow(t, l, unsafe.String(&buf[0], len(buf)), epoch, 3)
		for i := range buf {
			buf[i] = 'x' // the caller reuses its buffer
		}
		st, ok := l.State(want)
		require.True(t, ok, "key of %d bytes: State after the caller's buffer changed = %+v, %v; want Cur 3, held", size, st.Window, ok)
		require.Equal(t, int64(3), st.Window.Cur, "key of %d bytes: State after the caller's buffer changed = %+v, %v; want Cur 3, held", size, st.Window, ok)
		_, ok = l.State(string(buf))
		require.False(t, ok, "key of %d bytes: the caller's rewritten buffer names a held key", size)
	}
}
