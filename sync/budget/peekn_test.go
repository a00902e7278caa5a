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

// TestPeekCarriesTheReport: a peek carries this PoP's unreported spends
// of its identity, so Redis weighs them as counted units (as the decision
// Call AllowN would send does), never as budget still granted, and they
// are applied exactly once on a real Redis: with the peek when its reply
// comes, and when it does not (its caller left while Redis ran it, or
// before it was sent) again with the next Sync, under the peek's number,
// applied at most once. Mutations it catches: no report on the peek (C 0
// after the first peek), the report dropped when the peek's caller left
// (C stays 3 after the last Sync, not 4), sent again under a new number
// (C 4 after the second peek's Sync), the peek's number left in flight
// (reports.out not empty).
func TestPeekCarriesTheReport(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	m := newTestMachine(t, nil)
	x := int64(w0 / testWindow)
	e := m.entry("k")
	e.grants[0] = grantSlot{win: x, bal: 3}
	e.addOp(Op{X: x, GW: x, U: 2}) // a spend of the grant, unreported

	_, c := m.PeekN(w0+100, "k", 4)
	require.NotNil(t, c, "a peek asks Redis")
	require.Equal(t, []Op{{X: x, GW: x, U: 2}}, c.Items[0].Ops, "the peek carries the report")
	require.Equal(t, "dseq", c.guard, "under the decisions' report sequence")
	r, err := Exec(ctx, rdb, m, c, w0+100)
	require.NoError(t, err)
	d := m.PeekDone(w0+100, c, r, nil)
	assert.True(t, d.Allowed, "4 units: the grant's 3 and one at Redis")
	assert.Equal(t, int64(2), readState(t, rdb, m, "k", x).C, "the report applied with the peek")
	assert.Empty(t, m.reports.out, "the peek's number is done")
	assert.Empty(t, m.reports.redo, "and nothing waits to go again")

	gone := &CanceledError{Op: "budget peek", Err: context.Canceled}
	e.addOp(Op{X: x, GW: x, U: 1})
	_, c = m.PeekN(w0+200, "k", 1)
	require.NotNil(t, c)
	_, err = Exec(ctx, rdb, m, c, w0+200) // Redis ran it; its caller left before the reply
	require.NoError(t, err)
	m.PeekDone(w0+200, c, nil, gone)
	assert.Equal(t, int64(3), readState(t, rdb, m, "k", x).C, "Redis applied the second report")
	require.Len(t, m.reports.redo, 1, "it waits to go again")

	e.addOp(Op{X: x, GW: x, U: 1})
	_, c = m.PeekN(w0+300, "k", 1)
	require.NotNil(t, c)
	m.PeekDone(w0+300, c, nil, gone) // the caller left before it was sent
	require.Len(t, m.reports.redo, 2, "both wait to go again")

	calls := m.Tick(w0 + 400)
	res, errs := ExecAll(ctx, rdb, m, calls, w0+400)
	for i, k := range calls {
		require.NoError(t, errs[i])
		m.Finish(k, res[i], nil)
	}
	assert.Empty(t, m.reports.redo, "both done")
	assert.Equal(t, int64(4), readState(t, rdb, m, "k", x).C, "the second report once, the third once")
}

// TestPeekNRetryAfterIsHonest: two PoPs of one identity (limit 10, no
// free credit). A takes 7 units; B's PeekN of 5 units is denied, with a
// RetryAfter longer than its PeekN of 3 (which fits), and AllowN of 5 at
// B is admitted once that RetryAfter has passed, not 1 ms before it;
// PeekN counted nothing. A weight out of 1..Max is core.ErrBadWeight with
// nothing sent. Mutations it catches: PeekN peeking at one unit (the
// budget limiter's old peek: RetryAfter the wait for one unit, so B's 5
// units are denied after it), PeekN counting its units (the 3-unit peek
// would leave no room for AllowN of 5 later), a weight unchecked (a call
// sent).
func TestPeekNRetryAfterIsHonest(t *testing.T) {
	rdb, _ := redistest.Client(t)
	hook := newCallHook()
	rdb.AddHook(hook)
	ctx := context.Background()
	clk := core.NewManualClock(time.UnixMilli(w0 + 5))
	mk := func(pop string) *Limiter {
		l, err := New(Config{PoP: pop, Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clk)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(ctx) })
		return l
	}
	a, b := mk("a"), mk("b")
	clk.Advance(testWindow / 2 * time.Millisecond)
	d, err := a.AllowN(ctx, "k", clk.Now(), 7)
	require.NoError(t, err)
	require.True(t, d.Allowed)

	p3, err := b.PeekN(ctx, "k", clk.Now(), 3)
	require.NoError(t, err)
	assert.True(t, p3.Allowed, "3 of the 3 left fit: %+v", p3)
	p5, err := b.PeekN(ctx, "k", clk.Now(), 5)
	require.NoError(t, err)
	require.False(t, p5.Allowed, "5 do not: %+v", p5)
	p1, err := b.PeekN(ctx, "k", clk.Now(), 1)
	require.NoError(t, err)
	require.True(t, p1.Allowed)

	clk.Advance(p5.RetryAfter - time.Millisecond)
	early, err := b.PeekN(ctx, "k", clk.Now(), 5)
	require.NoError(t, err)
	assert.False(t, early.Allowed, "1 ms before PeekN's RetryAfter (%s) 5 units do not fit yet", p5.RetryAfter)
	clk.Advance(time.Millisecond)
	d, err = b.AllowN(ctx, "k", clk.Now(), 5)
	require.NoError(t, err)
	assert.True(t, d.Allowed, "AllowN of 5 once PeekN's RetryAfter (%s) passed: %+v", p5.RetryAfter, d)

	before := hook.sent.Load()
	for _, n := range []int64{0, -1, 11} {
		_, err = b.PeekN(ctx, "k", clk.Now(), n)
		assert.ErrorIs(t, err, core.ErrBadWeight, "PeekN of %d units", n)
	}
	assert.Equal(t, before, hook.sent.Load(), "nothing sent for a bad weight")
}

// TestPanickingPeekDone: a peek whose Exec panics (a Redis client's hook)
// is done before the panic goes on to PeekN's caller: the report it
// carried (the identity's unreported spend) waits to go again with the
// next Sync, no number is left in flight, and that Sync, Redis healthy,
// applies it once. Caught mutations: the peek left undone (reports.out
// keeps its number: after 31 more no decision Call could carry a report,
// and the spend is never sent: C 0 after the Sync), a panic recovered
// and not passed on.
func TestPanickingPeekDone(t *testing.T) {
	var on atomic.Bool
	l, rdb, clock, x := panicking(t, panicHook{&on})
	ctx := context.Background()
	l.mu.Lock()
	e := l.m.entry("k")
	e.grants[0] = grantSlot{win: x, bal: 2}
	e.addOp(Op{X: x, GW: x, U: 1}) // a spend of the grant, unreported
	l.mu.Unlock()

	on.Store(true)
	require.PanicsWithValue(t, "hook panicked", func() { _, _ = l.PeekN(ctx, "k", clock.Now(), 3) }, "the hook's panic reaches the caller")
	l.mu.Lock()
	out, redo := len(l.m.reports.out), len(l.m.reports.redo)
	l.mu.Unlock()
	assert.Zero(t, out, "the peek is done: no number in flight")
	assert.Equal(t, 1, redo, "its report waits to go again")

	on.Store(false)
	require.NoError(t, l.Sync(ctx))
	assert.Equal(t, int64(1), readState(t, rdb, l.m, "k", x).C, "the spend applied once, with the Sync")
	l.mu.Lock()
	assert.Empty(t, l.m.reports.redo, "and done")
	l.mu.Unlock()
}

// TestPeekWhileDownAsksNothing: a Peek whose call fails (Redis killed)
// answers from the view with an error matching core.ErrUnavailable and
// puts the Limiter down, as a failed AllowN does; while it is down, Peek
// and PeekN answer from the view (fail-open: allowed while the view's
// Remaining covers them) with that error and send nothing, so a caller
// peeking during an outage does not wait on a dead Redis each time; once
// Redis is back and a Sync found it, Peek asks Redis again. Mutations it
// catches: a failed peek not putting the Limiter down (the second Peek
// sends a call), a peek while down sending one anyway, or answering
// without the error (a middleware would not know of the outage).
func TestPeekWhileDownAsksNothing(t *testing.T) {
	_, p := redistest.Client(t)
	hook := newCallHook()
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1})
	rdb.AddHook(hook)
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "a", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clock)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(ctx) })
	d, err := l.Peek(ctx, "k", clock.Now())
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.Equal(t, core.SourceRedis, d.Source)

	require.NoError(t, p.Kill())
	d, err = l.Peek(ctx, "k", clock.Now())
	require.ErrorIs(t, err, core.ErrUnavailable, "the call failed")
	assert.True(t, d.Allowed, "the view's answer, fail-open: %+v", d)
	assert.True(t, l.m.Down(), "a failed peek puts the Limiter down")

	sent := hook.sent.Load()
	for _, n := range []int64{1, 10} {
		d, err = l.PeekN(ctx, "k", clock.Now(), n)
		assert.ErrorIs(t, err, core.ErrUnavailable, "PeekN of %d while down", n)
		assert.True(t, d.Allowed, "the view's answer: %+v", d)
		assert.Equal(t, core.SourceLocal, d.Source, "decided on the view")
	}
	assert.Equal(t, sent, hook.sent.Load(), "nothing sent while down")

	require.NoError(t, p.Restart())
	clock.Advance(time.Second)
	require.NoError(t, l.Sync(ctx), "a Sync finds Redis back")
	require.False(t, l.m.Down())
	sent = hook.sent.Load()
	d, err = l.Peek(ctx, "k", clock.Now())
	require.NoError(t, err)
	assert.Equal(t, core.SourceRedis, d.Source, "asked Redis again")
	assert.Equal(t, sent+1, hook.sent.Load(), "one call")
}
