package budget

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipePanicHook is a go-redis hook that panics on pipelines (a Sync's
// ExecAll) while on is set.
type pipePanicHook struct{ on *atomic.Bool }

func (h pipePanicHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h pipePanicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h pipePanicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.on.Load() {
			panic("pipeline hook panicked")
		}
		return next(ctx, cmds)
	}
}

// panicking builds a one-PoP NoWait Limiter (its free unit is spent here
// unreported) on a client with hook, and spends that unit of "spent".
func panicking(t *testing.T, hook redis.Hook) (*Limiter, *redis.Client, *core.ManualClock, int64) {
	_, p := redistest.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	rdb.AddHook(hook)
	t.Cleanup(func() { rdb.Close() })
	clk := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "p", Incarnation: 1, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 1, NoWait: true}, rdb, clk)
	require.NoError(t, err)
	ctx := context.Background()
	t.Cleanup(func() { _ = l.Close(ctx) })
	require.NoError(t, l.Sync(ctx), "the lease")
	d, err := l.AllowN(ctx, "spent", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceLocal, d.Source, "the free unit, unreported")
	return l, rdb, clk, int64(w0 / testWindow)
}

// TestPanickingResetDone: a Reset whose Exec panics (a Redis client's
// hook) is done before the panic goes on, as a caller gone: the
// unreported spend it carried reaches Redis with the next Syncs, no Reset
// stays in flight, and the Resets after it are not refused. Caught
// mutations: no recovery (the spend never sent, the Reset's number held
// for good: the 32nd Reset after it refused), a panic recovered and not
// passed on (the first assertion).
func TestPanickingResetDone(t *testing.T) {
	var on atomic.Bool
	l, rdb, clk, x := panicking(t, panicHook{&on})
	ctx := context.Background()
	on.Store(true)
	require.PanicsWithValue(t, "hook panicked", func() { _ = l.Reset(ctx, "spent") }, "the hook's panic reaches the caller")
	on.Store(false)
	for range 3 {
		clk.Advance(10 * time.Millisecond)
		require.NoError(t, l.Sync(ctx))
	}
	assert.Equal(t, int64(1), readState(t, rdb, l.m, "spent", x).C, "the free unit the Reset carried is reported")
	l.mu.Lock()
	resets := len(l.m.reports.resets)
	l.mu.Unlock()
	assert.Zero(t, resets, "no Reset in flight")
	for i := range 40 {
		require.NoError(t, l.Reset(ctx, "k"), "Reset %d after the panicked one", i+1)
	}
}

// TestPanickingSyncFinished: a Sync whose pipeline panics finishes its
// batches before the panic goes on, as a caller gone's: the next Syncs
// send them again (the unreported spend reaches Redis), nothing stays in
// flight, and Redis is not counted down. Caught mutations: no recovery
// (the group's batch in flight for good, never sent again: the spend is
// never reported), a panic recovered and not passed on.
func TestPanickingSyncFinished(t *testing.T) {
	var on atomic.Bool
	l, rdb, clk, x := panicking(t, pipePanicHook{&on})
	ctx := context.Background()
	on.Store(true)
	require.PanicsWithValue(t, "pipeline hook panicked", func() { _ = l.Sync(ctx) }, "the hook's panic reaches the caller")
	on.Store(false)
	l.mu.Lock()
	down := l.m.Down()
	l.mu.Unlock()
	assert.False(t, down, "a panic is no outage")
	for range 3 {
		clk.Advance(10 * time.Millisecond)
		require.NoError(t, l.Sync(ctx))
	}
	l.mu.Lock()
	inflight := l.m.groups[0].inflight
	l.mu.Unlock()
	assert.Nil(t, inflight, "no batch left in flight")
	assert.Equal(t, int64(1), readState(t, rdb, l.m, "spent", x).C, "the free unit reported")
}

// TestHotListBadBucket: a hot-list member whose bucket is not one of the
// Machine's (corrupted, or written by something else) is left out of the
// reply: filed, the next Tick indexed the groups at -1 and panicked with
// the Limiter's lock held, so every later call blocked; refused, the
// reply would put the Limiter down until the list expires. The Syncs
// succeed and the Limiter stays up. Caught mutations: the bucket's range
// unchecked (the second Sync panics), the reply refused (the first Sync
// fails).
func TestHotListBadBucket(t *testing.T) {
	for _, member := range []string{"-3|evil", "2|evil", "9999|evil"} {
		rdb, _ := redistest.Client(t)
		clk := core.NewManualClock(time.UnixMilli(w0 + 5))
		l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, Groups: 2, Buckets: 2}, rdb, clk)
		require.NoError(t, err)
		ctx := context.Background()
		for g := range 2 {
			require.NoError(t, rdb.ZAdd(ctx, l.m.tag(g)+":hz:"+strconv.FormatInt(w0/testWindow, 10), redis.Z{Score: 1, Member: member}).Err())
		}
		assert.NoError(t, l.Sync(ctx), "%s: the reply is read", member)
		assert.NotPanics(t, func() { assert.NoError(t, l.Sync(ctx), "%s: the next Sync", member) }, "%s: the next Tick", member)
		require.True(t, l.mu.TryLock(), "%s: the lock is free", member)
		down := l.m.Down()
		l.mu.Unlock()
		assert.False(t, down, "%s: the Limiter is not down", member)
		require.NoError(t, rdb.FlushAll(ctx).Err())
		_ = l.Close(ctx)
	}
}

// TestCloseEndedContext: Close with a context already ended returns what
// Sync returns for it, whatever the loop is doing: a *CanceledError when
// cancelled, a *core.UnavailableError wrapping the deadline when that
// passed; and it closes. Caught mutation: ctx's bare error returned when
// it ends before the loop does (a select between the loop's end and ctx's
// picked either at random, and so either error: 20 rounds).
func TestCloseEndedContext(t *testing.T) {
	rdb, _ := redistest.Client(t)
	for i := range 20 {
		for _, deadline := range []bool{false, true} {
			l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, core.NewManualClock(time.UnixMilli(w0+5)))
			require.NoError(t, err)
			l.Start()
			ctx, cancel := context.WithCancel(context.Background())
			if deadline {
				ctx, cancel = context.WithDeadline(context.Background(), time.Unix(0, 0))
			}
			cancel()
			err = l.Close(ctx)
			if deadline {
				var ue *core.UnavailableError
				assert.ErrorAs(t, err, &ue, "round %d: a deadline passed", i)
				assert.ErrorIs(t, err, context.DeadlineExceeded, "round %d", i)
			} else {
				var ce *CanceledError
				assert.ErrorAs(t, err, &ce, "round %d: cancelled", i)
				assert.ErrorIs(t, err, context.Canceled, "round %d", i)
			}
			assert.ErrorIs(t, l.Close(context.Background()), ErrClosed, "round %d: closed", i)
		}
	}
}

// TestSyncAfterClose: Sync after Close returns ErrClosed and sends
// nothing, as every other method does, though its free-credit lease has
// run out by then (an open Limiter's Sync renews it: the control below).
// Caught mutation: the Close check left out (Sync returns nil and sends
// the renewal).
func TestSyncAfterClose(t *testing.T) {
	rdb, _ := redistest.Client(t)
	for _, closed := range []bool{false, true} {
		clk := core.NewManualClock(time.UnixMilli(w0 + 5))
		l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clk)
		require.NoError(t, err)
		ctx := context.Background()
		_, err = l.Allow(ctx, "k")
		require.NoError(t, err)
		if closed {
			require.NoError(t, l.Close(ctx))
		} else {
			require.NoError(t, l.Sync(ctx))
		}
		calls := l.Stats().Calls
		clk.Advance(5 * testWindow * time.Millisecond) // past the lease
		if closed {
			assert.ErrorIs(t, l.Sync(ctx), ErrClosed)
			assert.Equal(t, calls, l.Stats().Calls, "nothing sent after Close")
			continue
		}
		require.NoError(t, l.Sync(ctx))
		assert.Greater(t, l.Stats().Calls, calls, "control: an open Limiter's Sync renews its lease")
		require.NoError(t, l.Close(ctx))
	}
}
