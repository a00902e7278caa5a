package local

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clocktest"
	"github.com/edgelimit/edgelimit/internal/keybuf"
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
		if allowed != 0 || denied != 0 || viaAllow != 0 || peek != 0 {
			t.Fatalf("allocs per call: allowed %v, denied %v, Allow %v, Peek %v; want 0", allowed, denied, viaAllow, peek)
		}
	})
}

// TestBadInputCreatesNothing: bad keys and weights return typed errors that
// match core.ErrInvalid, and create no entry.
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
			if !errors.Is(err, c.want) || !errors.Is(err, core.ErrInvalid) || d.Allowed {
				t.Fatalf("AllowN(len %d, %d) = %+v, %v; want denied and %v", len(c.key), c.n, d, err, c.want)
			}
		}
		if _, err := l.Peek(ctx, "", epoch); !errors.Is(err, core.ErrEmptyKey) {
			t.Fatalf("Peek(\"\"): %v", err)
		}
		if err := l.Reset(ctx, strings.Repeat("k", core.MaxKeyLen+1)); !errors.Is(err, core.ErrKeyTooLong) {
			t.Fatalf("Reset(long): %v", err)
		}
		if l.Len() != 1 {
			t.Fatalf("Len() = %d after bad input, want 1", l.Len())
		}
		if st, _ := l.State("present"); st.Window.Cur+int64(len(st.Log.Stamps)) == 0 && st.Bucket.TAT == 0 {
			t.Fatal("the present key lost its state")
		}
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
	}
	for _, c := range cases {
		if _, err := New(c.l, c.opts...); !errors.Is(err, c.want) || !errors.Is(err, core.ErrInvalid) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
}

// TestPeekDoesNotSpend: any number of peeks leave the quota and store as
// they were; a peek of an unknown key stores nothing.
func TestPeekDoesNotSpend(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 3, Window: time.Minute, Algorithm: a})
		for i := 0; i < 10; i++ {
			if d, _ := l.Peek(ctx, "k", epoch); !d.Allowed || d.Remaining != 3 {
				t.Fatalf("Peek on a fresh key = %+v, want allowed with 3 remaining", d)
			}
		}
		if l.Len() != 0 {
			t.Fatalf("Peek stored an entry: Len() = %d", l.Len())
		}
		mustAllow(t, l, "k", epoch, 2)
		for i := 0; i < 10; i++ {
			if d, _ := l.Peek(ctx, "k", epoch); !d.Allowed || d.Remaining != 1 {
				t.Fatalf("Peek after 2 of 3 = %+v, want allowed with 1 remaining", d)
			}
		}
		if d := mustAllow(t, l, "k", epoch, 1); !d.Allowed || d.Remaining != 0 {
			t.Fatalf("third unit = %+v, want allowed with 0 remaining", d)
		}
	})
}

// TestResetForgets: after Reset the full quota is back and the entry gone;
// resetting an unknown key is fine.
func TestResetForgets(t *testing.T) {
	eachAlgorithm(t, func(t *testing.T, a core.Algorithm) {
		l := mustNew(t, core.Limit{Max: 2, Window: time.Minute, Algorithm: a})
		mustAllow(t, l, "k", epoch, 2)
		if d := mustAllow(t, l, "k", epoch, 1); d.Allowed {
			t.Fatal("third unit of 2 allowed")
		}
		if err := l.Reset(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if err := l.Reset(ctx, "never-seen"); err != nil {
			t.Fatal(err)
		}
		if _, ok := l.State("k"); ok || l.Len() != 0 {
			t.Fatalf("after Reset: held %v, Len() %d", ok, l.Len())
		}
		if d := mustAllow(t, l, "k", epoch, 2); !d.Allowed {
			t.Fatal("full quota not back after Reset")
		}
		if l.Evictions() != 0 {
			t.Fatalf("Reset counted as eviction: %d", l.Evictions())
		}
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
			if n := clk.Reads() - before; n != 3 {
				t.Fatalf("3 Allow calls read UnixMilli %d times, want 3", n)
			}
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
		t.Fatal("first Allow denied")
	}
	d, _ := l.Allow(ctx, "k")
	if d.Allowed {
		t.Fatal("second Allow at the same clock time admitted")
	}
	clk.Advance(d.RetryAfter)
	if d, _ := l.Allow(ctx, "k"); !d.Allowed {
		t.Fatalf("Allow after the clock moved by RetryAfter %v denied", d.RetryAfter)
	}
	if d, _ := l.Peek(ctx, "k", epoch.Add(skew)); d.Allowed {
		t.Fatalf("Peek at the clock's time (epoch + %v) should see the spent quota", skew)
	}
}

// TestStateCopies: State returns the algorithm's counters as a copy.
func TestStateCopies(t *testing.T) {
	now := epoch.Add(1500 * time.Millisecond)
	sliding := mustNew(t, core.PerWindow(10, time.Second))
	mustAllow(t, sliding, "k", now, 4)
	if st, ok := sliding.State("k"); !ok || st.Window != (core.WindowState{Index: core.Millis(now) / 1000, Cur: 4}) {
		t.Fatalf("sliding State = %+v, %v", st, ok)
	}
	log := mustNew(t, core.Limit{Max: 10, Window: time.Second, Algorithm: core.SlidingLog})
	mustAllow(t, log, "k", now, 2)
	st, _ := log.State("k")
	st.Log.Stamps[0] = 0 // a copy: the stored log is unchanged
	if st2, _ := log.State("k"); len(st2.Log.Stamps) != 2 || st2.Log.Stamps[0] != core.Millis(now) {
		t.Fatalf("log State = %+v", st2)
	}
	bucket := mustNew(t, core.Limit{Max: 10, Window: time.Second, Algorithm: core.TokenBucket})
	mustAllow(t, bucket, "k", now, 1)
	if st, _ := bucket.State("k"); st.Bucket.TAT != core.Millis(now)*1000+100_000 {
		t.Fatalf("bucket State = %+v", st)
	}
	if _, ok := bucket.State("absent"); ok {
		t.Fatal("State of an absent key reported held")
	}
}

// TestDistinctKeysNeverShare: keys differing in any byte have their own
// state.
func TestDistinctKeysNeverShare(t *testing.T) {
	l := mustNew(t, core.PerWindow(1, time.Minute))
	for _, k := range []string{"a", "a ", "A", "a\x00", "{a}", "a:b", "é", "\xff"} {
		if d := mustAllow(t, l, k, epoch, 1); !d.Allowed {
			t.Fatalf("key %q shared state with an earlier key", k)
		}
	}
}

// TestDefaultShards: a power of two with room for every core.
func TestDefaultShards(t *testing.T) {
	n := DefaultShards()
	if n&(n-1) != 0 || n < runtime.GOMAXPROCS(0) || n > 256 {
		t.Fatalf("DefaultShards() = %d", n)
	}
	st := mustNew(t, core.PerWindow(1, time.Minute)).eng.(*store[core.WindowState])
	if len(st.shards) != n {
		t.Fatalf("New uses %d shards, want %d", len(st.shards), n)
	}
}

// TestShardPadding: shards are at least 128 bytes apart whatever the state
// type, so neighbouring shard locks do not false-share.
func TestShardPadding(t *testing.T) {
	sizes := []uintptr{unsafe.Sizeof(shard[core.WindowState]{}), unsafe.Sizeof(shard[core.BucketState]{}), unsafe.Sizeof(shard[*core.LogState]{})}
	for _, s := range sizes {
		if s < 128 {
			t.Fatalf("shard sizes %v: one is below 128 bytes", sizes)
		}
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
		if !ok || st.Window.Cur != 3 {
			t.Fatalf("key of %d bytes: State after the caller's buffer changed = %+v, %v; want Cur 3, held", size, st.Window, ok)
		}
		if _, ok := l.State(string(buf)); ok {
			t.Fatalf("key of %d bytes: the caller's rewritten buffer names a held key", size)
		}
	}
}
