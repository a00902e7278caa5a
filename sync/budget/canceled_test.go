package budget

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// callHook is a go-redis hook that counts the commands and pipelines the
// client sends and, armed, plays a client that honours cancellation: it
// lets the next call through to Redis, which runs it, tells ran, and
// once the caller's context is done returns its error instead of the
// reply (the caller left while Redis had the call).
type callHook struct {
	sent  atomic.Int64
	armed atomic.Bool
	ran   chan struct{}
}

func newCallHook() *callHook { return &callHook{ran: make(chan struct{}, 1)} }

func (h *callHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *callHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.sent.Add(1)
		err := next(ctx, cmd)
		if err == nil && h.armed.CompareAndSwap(true, false) {
			h.ran <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return err
	}
}

func (h *callHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.sent.Add(1)
		err := next(ctx, cmds)
		if err == nil && h.armed.CompareAndSwap(true, false) {
			h.ran <- struct{}{}
			<-ctx.Done()
			for _, c := range cmds {
				c.SetErr(ctx.Err())
			}
			return ctx.Err()
		}
		return err
	}
}

// assertGone asserts err is a caller gone's: a *CanceledError matching
// context.Canceled and not core.ErrUnavailable.
func assertGone(t *testing.T, err error, what string) {
	t.Helper()
	var ce *CanceledError
	assert.ErrorAs(t, err, &ce, what)
	assert.ErrorIs(t, err, context.Canceled, what)
	assert.NotErrorIs(t, err, core.ErrUnavailable, "%s: no outage", what)
}

// TestCanceledBeforeCallCountsNothing: two Limiters of one PoP's
// configuration on one healthy Redis (apart by Namespace) see the same
// requests, but at one of them a caller whose context was cancelled
// first asks 2 units of an identity whose free unit is unreported. That
// caller gets the zero Decision and a *CanceledError (context.Canceled,
// not core.ErrUnavailable), nothing is sent, the Limiter stays up, and
// nothing of the request is counted: the next request gets the Decision
// the other Limiter gives, and after a Sync Redis holds the same counts
// for both (the free unit's report, which the gone request's Call took,
// reached Redis with the Sync after it, once). Peek, Sync and
// Reset on a cancelled context send nothing either, and the Reset forgets
// nothing. Mutations it catches:
// the request decided on the view and counted (the old behaviour: the
// next request's Remaining 2 lower, C 2 higher, an error matching
// core.ErrUnavailable), the request's units left in the demand (a grant
// asked for them serves the next request: another Source), a call sent
// for a caller already gone, a gone Sync putting the Limiter down, a gone
// Reset forgetting the view.
func TestCanceledBeforeCallCountsNothing(t *testing.T) {
	rdb, _ := redistest.Client(t)
	hook := newCallHook()
	rdb.AddHook(hook)
	ctx := context.Background()
	clk := core.NewManualClock(time.UnixMilli(w0 + 5))
	mk := func(ns string) *Limiter {
		l, err := New(Config{PoP: "p", Incarnation: 1, Namespace: ns, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 1}, rdb, clk)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(ctx) })
		require.NoError(t, l.Sync(ctx), "the lease")
		d, err := l.AllowN(ctx, "k", clk.Now(), 1)
		require.NoError(t, err)
		require.Equal(t, core.SourceLocal, d.Source, "the free unit, unreported")
		return l
	}
	l, ref := mk("gone"), mk("ref")
	gone, cancel := context.WithCancel(ctx)
	cancel()

	before := hook.sent.Load()
	d, err := l.AllowN(gone, "k", clk.Now(), 2)
	assertGone(t, err, "AllowN")
	assert.Equal(t, core.Decision{}, d, "no decision")
	d, err = l.Peek(gone, "k", clk.Now())
	assertGone(t, err, "Peek")
	assert.Equal(t, core.Decision{}, d, "no decision")
	assertGone(t, l.Sync(gone), "Sync")
	assert.Equal(t, before, hook.sent.Load(), "nothing sent for a caller already gone")
	assert.False(t, l.m.Down(), "Redis did not fail: the Limiter is not down")

	for _, lim := range []*Limiter{l, ref} {
		require.NoError(t, lim.Sync(ctx))
	}
	x := int64(w0 / testWindow)
	assert.Equal(t, int64(1), readState(t, rdb, l.m, "k", x).C, "the report the gone request's Call took (the free unit) reached Redis with the Sync")
	want, err := ref.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	got, err := l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the next request is decided as if the gone one never came")
	for _, lim := range []*Limiter{l, ref} {
		require.NoError(t, lim.Sync(ctx))
	}
	for y := x; y <= x+giveUpAhead; y++ {
		assert.Equal(t, readState(t, rdb, ref.m, "k", y), readState(t, rdb, l.m, "k", y), "Redis' counts of window %d", y)
	}
	assert.Equal(t, int64(2), readState(t, rdb, l.m, "k", x).C, "the free unit and the next request's, once each")

	before = hook.sent.Load()
	assertGone(t, l.Reset(gone, "k"), "Reset")
	assert.Equal(t, before, hook.sent.Load(), "nothing sent for a caller already gone")
	assert.Equal(t, int64(2), readState(t, rdb, l.m, "k", x).C, "nothing forgotten at Redis")
	want, err = ref.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	got, err = l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	assert.Equal(t, want, got, "nor in the view")
}

// TestCanceledInFlightKeepsReports: a caller leaves while Redis runs its
// decision Call, which carries this PoP's report (its free unit, the next
// windows' slots given up); the client returns the cancellation, not the
// reply. The caller gets the zero Decision and a *CanceledError, the
// Limiter stays up, and the report is sent again under its number and
// found applied: Redis holds the free unit once and the 2 units it
// decided for the request, which stay counted (Redis may have counted
// them; nothing tells this PoP it did not), and nothing is counted on
// the view beside them. Then a Sync that leaves while Redis runs its
// batch: a *CanceledError, the Limiter up, the batch sent again by the
// next Sync. Mutations it catches: the request decided on the view (the
// old behaviour: an error matching core.ErrUnavailable, 2 units more
// reported: C 5), the report dropped (none waits to go again) or sent
// under a new number (C 4), a gone Call or batch putting the Limiter
// down.
func TestCanceledInFlightKeepsReports(t *testing.T) {
	rdb, _ := redistest.Client(t)
	hook := newCallHook()
	rdb.AddHook(hook)
	ctx := context.Background()
	clk := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "p", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 1}, rdb, clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(ctx) })
	require.NoError(t, l.Sync(ctx), "the lease")
	d, err := l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	require.Equal(t, core.SourceLocal, d.Source, "the free unit, unreported")

	leave := func(call func(context.Context) error) error {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		hook.armed.Store(true)
		done := make(chan error, 1)
		go func() { done <- call(cctx) }()
		<-hook.ran // Redis ran the call
		cancel()   // and the caller left before its reply
		return <-done
	}
	var got core.Decision
	err = leave(func(c context.Context) error {
		var err error
		got, err = l.AllowN(c, "k", clk.Now(), 2)
		return err
	})
	assertGone(t, err, "AllowN")
	assert.Equal(t, core.Decision{}, got, "no decision")
	assert.False(t, l.m.Down(), "the Limiter is not down")
	assert.Len(t, l.m.reports.redo, 1, "the report waits to be sent again")

	require.NoError(t, l.Sync(ctx), "the report goes again, found applied")
	assert.Empty(t, l.m.reports.redo, "and is done")
	x := int64(w0 / testWindow)
	assert.Equal(t, int64(1+2), readState(t, rdb, l.m, "k", x).C, "the free unit once, and the units Redis decided")

	clk.Advance(3 * testWindow * time.Millisecond) // the lease falls due: a batch goes
	assertGone(t, leave(l.Sync), "Sync")
	assert.False(t, l.m.Down(), "the Limiter is not down")
	require.NoError(t, l.Sync(ctx), "the batch goes again")
	d, err = l.AllowN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err, "Redis is up")
	assert.True(t, d.Allowed)
}

// TestCanceledCallHandsBackTakings: a decision Call whose caller left
// (Complete with a *CanceledError) took the request's free slot, 3 units
// of its grant and an earlier spend's report. It returns the zero
// Decision and leaves the Machine up; the grant units are back in the
// balance, the slot is given up with no units, nothing is counted on the
// view (no op of the request's units, no own count: this PoP's unreported
// units are what they were) nor left in the demand a grant is sized by,
// and the report goes again under its number
// with the next Tick; when that Sync's caller leaves too (Finish with a
// *CanceledError), the Machine stays up and the report goes again. Caught
// mutations: the request decided on the view (the old behaviour: 5 units
// admitted and reported as the fallback's), Redis counted down, the
// grant units kept out of the balance, the report dropped.
func TestCanceledCallHandsBackTakings(t *testing.T) {
	m := newTestMachine(t, nil)
	x := int64(1000)
	e := m.entry("k")
	e.grants[0] = grantSlot{win: x, bal: 3}
	e.addOp(Op{X: x, GW: x, U: 1}) // a spend of the grant, unreported
	ownBefore, unrepBefore := e.own, m.unreported(e, x)
	_, c := m.Request(w0+10, "k", 5)
	require.NotNil(t, c, "5 units: the slot and the grant pay 4, Redis decides 1")
	require.Equal(t, int64(1), c.req.slot)
	require.Equal(t, int64(1), c.Items[0].N)
	require.NotZero(t, c.Seq, "the Call carries the report")
	report := c.Items[0]
	gone := &CanceledError{Op: "budget script", Err: context.Canceled}

	d := m.Complete(w0+20, c, nil, gone)
	assert.Equal(t, Decision{}, d, "no decision")
	assert.False(t, m.Down(), "the caller left: Redis did not fail")
	assert.Equal(t, int64(3), m.balance(e, x), "the grant units are back")
	assert.Equal(t, []Op{{X: x, GW: GWFree, U: 0}}, e.pending(), "the slot given up with no units, nothing else")
	assert.Equal(t, ownBefore, e.own, "nothing counted for the fallback")
	assert.Equal(t, unrepBefore, m.unreported(e, x), "this PoP's unreported units are what they were")
	assert.Zero(t, e.demand, "no grant for demand that left")

	calls := m.Tick(w0 + 30)
	var redo *Call
	for _, k := range calls {
		if k.redo {
			redo = k
		}
	}
	require.NotNil(t, redo, "the report goes again")
	assert.Equal(t, c.Seq, redo.Seq, "under its number")
	assert.Equal(t, report.Ops, redo.Items[0].Ops)
	assert.Equal(t, report.Claims, redo.Items[0].Claims)
	for _, k := range calls {
		m.Finish(k, nil, gone)
	}
	assert.False(t, m.Down(), "a Sync whose caller left: Redis did not fail")
	redo = nil
	for _, k := range m.Tick(w0 + 40) {
		if k.redo {
			redo = k
		}
	}
	require.NotNil(t, redo, "the report goes again")
	assert.Equal(t, c.Seq, redo.Seq, "under its number")
}

// panicHook is a go-redis hook that panics on the budget script's calls
// while on is set.
type panicHook struct{ on *atomic.Bool }

func (h panicHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.on.Load() && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			panic("hook panicked")
		}
		return next(ctx, cmd)
	}
}

func (h panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestPanickingCallCompleted: a decision Call whose Exec panics (here a
// Redis client's hook) is completed before the panic goes on to AllowN's
// caller: the identity has no Call in flight afterwards, and its next
// request, Redis healthy, is sent and admitted. Caught mutations: no
// completion (the identity kept a Call in flight for good, which denies a
// flooding identity here for good: the first assertion after the panic
// fails), and a panic recovered and not passed on (the first).
func TestPanickingCallCompleted(t *testing.T) {
	_, p := redistest.Client(t)
	var on atomic.Bool
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	rdb.AddHook(panicHook{&on})
	t.Cleanup(func() { rdb.Close() })
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "a", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clock)
	require.NoError(t, err)
	ctx := context.Background()
	t.Cleanup(func() { _ = l.Close(ctx) })

	on.Store(true)
	require.PanicsWithValue(t, "hook panicked", func() { _, _ = l.Allow(ctx, "k") }, "the hook's panic reaches the caller")
	l.mu.Lock()
	e := l.m.view["k"]
	require.NotNil(t, e, "the request made a full entry")
	asking, down := e.asking, l.m.Down()
	l.mu.Unlock()
	assert.Zero(t, asking, "the Call that panicked is completed: none in flight")
	assert.False(t, down, "a panic is no outage")

	on.Store(false)
	calls := l.Stats().Calls
	d, err := l.Allow(ctx, "k")
	require.NoError(t, err)
	assert.True(t, d.Allowed, "the next request is admitted")
	assert.Equal(t, core.SourceRedis, d.Source, "decided at Redis")
	assert.Equal(t, calls+1, l.Stats().Calls, "one Call sent for it")
}
