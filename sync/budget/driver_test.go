package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCancelledCallerKeepsRedisUp: a caller whose context was
// cancelled (its HTTP client went away) gets an error for its own decision
// Call, but Redis is healthy: the next caller, of another identity, must
// still be decided at Redis, with no error. Under FailClosed a Limiter
// that took the cancellation for an outage denies it.
func TestCancelledCallerKeepsRedisUp(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2,
		FreeCredit: -1, FailClosed: true}, rdb, clock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(ctx) })
	require.NoError(t, l.Sync(ctx), "the lease is taken on a healthy Redis")

	gone, cancel := context.WithCancel(ctx)
	cancel()
	_, err = l.AllowN(gone, "leaver", clock.Now(), 1)
	require.ErrorIs(t, err, context.Canceled, "the cancelled caller is told why")

	d, err := l.AllowN(ctx, "other", clock.Now(), 1)
	assert.NoError(t, err, "Redis is up: another caller's decision is made there")
	assert.True(t, d.Allowed, "1 unit of 10 on a healthy Redis")
	assert.Equal(t, core.SourceRedis, d.Source)
}

// TestClosedMatchesCoreErrClosed: core.ErrClosed says every limiter's
// decisions return it after Close; the budget Limiter's must match it.
func TestClosedMatchesCoreErrClosed(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	require.NoError(t, l.Close(ctx))
	_, err = l.Allow(ctx, "k")
	assert.ErrorIs(t, err, ErrClosed)
	assert.ErrorIs(t, err, core.ErrClosed, "AllowN after Close")
	_, err = l.Peek(ctx, "k", clock.Now())
	assert.ErrorIs(t, err, core.ErrClosed, "Peek after Close")
	assert.ErrorIs(t, l.Reset(ctx, "k"), core.ErrClosed, "Reset after Close")
}

// TestCloseHonoursItsContext: Close(ctx) waits for the Sync loop's
// Sync in flight; on a Redis that never answers (its clients paused for
// ten minutes, a client with no timeout of its own) Close must still return
// once its context's deadline passes.
func TestCloseHonoursItsContext(t *testing.T) {
	admin, p := redistest.Client(t)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr, ContextTimeoutEnabled: true, MaxRetries: -1,
		ReadTimeout: -1, WriteTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2}, rdb, clock)
	require.NoError(t, err)
	require.NoError(t, admin.Do(ctx, "CLIENT", "PAUSE", 600_000, "ALL").Err())
	l.Start()
	require.Eventually(t, func() bool { return l.Stats().Calls > 0 }, time.Minute, time.Millisecond,
		"the loop's first Sync planned its call (the lease)")
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- l.Close(cctx) }()
	var got error
	require.Eventually(t, func() bool {
		select {
		case got = <-done:
			return true
		default:
			return false
		}
	}, 30*time.Second, 10*time.Millisecond, "Close returned once its context ended (hang guard; the pause lasts ten minutes)")
	assert.ErrorIs(t, got, context.DeadlineExceeded)
}

// TestLostDecisionReplyNeverUndercounts: a decision Call Redis applied
// (it admitted and counted the unit) whose reply never came (a caller's
// deadline with ContextTimeoutEnabled, a dropped connection): the request
// is decided again on the view, admitted and counted as a fallback unit.
// Once every Sync has landed, Redis' C holds every unit this PoP admitted
// and at most the lost call's units more: its decision is counted again,
// a stated bound (an over-count costs the identity quota, never the
// limit), while its report, numbered, is applied once.
func TestLostDecisionReplyNeverUndercounts(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	m := testMachine(t, 1, 10)
	w := int64(91)
	now := w*testWindow + 10
	takeLease(t, rdb, m, now)
	d, c := m.Request(now, "k", 1)
	require.Nil(t, c)
	require.True(t, d.Allowed, "the free unit")
	admitted := int64(1)
	_, c = m.Request(now+1, "k", 1)
	require.NotNil(t, c, "the second unit is decided at Redis")
	r, err := Exec(ctx, rdb, m, c, c.Now)
	require.NoError(t, err)
	require.Equal(t, int64(1), r.Items[0].Allowed, "Redis admitted it and counted it")
	d = m.Complete(now+100, c, nil, &core.UnavailableError{Op: "budget script", Err: context.DeadlineExceeded})
	if d.Allowed {
		admitted++
	}
	for i := range 5 { // Syncs until nothing is left to send
		t := now + 200 + int64(i)*100
		calls := m.Tick(t)
		res, errs := ExecAll(ctx, rdb, m, calls, t)
		for j, k := range calls {
			m.Finish(k, res[j], errs[j])
		}
	}
	got := readState(t, rdb, m, "k", w).C
	assert.GreaterOrEqual(t, got, admitted, "Redis counts every unit admitted here (%d, one of them by the fallback after the lost reply)", admitted)
	assert.LessOrEqual(t, got, admitted+1, "and at most the lost call's 1 unit more")
}

// TestFailClosedRetryAfter: with Redis down, a FailClosed Limiter
// denies what no grant or free credit covers (core.SourceFailClosed). Its
// verdict cannot change before the next Sync probes Redis, so RetryAfter
// (Envoy's DurationUntilReset) should be at least a Sync interval, not the
// view's 1 ms.
func TestFailClosedRetryAfter(t *testing.T) {
	rdb, srv := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2,
		FreeCredit: -1, FailClosed: true}, rdb, clock)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(ctx) })
	require.NoError(t, l.Sync(ctx))
	srv.Stop()
	d, err := l.AllowN(ctx, "k", clock.Now(), 1)
	require.ErrorIs(t, err, core.ErrUnavailable)
	require.False(t, d.Allowed)
	require.Equal(t, core.SourceFailClosed, d.Source)
	assert.GreaterOrEqual(t, d.RetryAfter, l.m.Config().SyncInterval, "RetryAfter %v of a fail-closed denial", d.RetryAfter)
	d, err = l.AllowN(ctx, "k", clock.Now(), 1)
	require.ErrorIs(t, err, core.ErrUnavailable)
	assert.GreaterOrEqual(t, d.RetryAfter, l.m.Config().SyncInterval, "RetryAfter %v of a fail-closed denial without a call", d.RetryAfter)
}

// TestOutageAdmissionsReported: units a PoP admits on its view while
// Redis is down (fallback ops) are in no grant at Redis: once Redis
// answers again, the Syncs must report them, so Redis' C of their window
// holds every unit this PoP admitted, whether or not the identity is
// asked about again after the outage.
func TestOutageAdmissionsReported(t *testing.T) {
	for _, tc := range []struct {
		name          string
		ticksInOutage int
	}{{"no Sync during the outage", 0}, {"failed Syncs during the outage", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			rdb, _ := redistest.Client(t)
			ctx := context.Background()
			m := testMachine(t, 2, 10)
			w := int64(91)
			now := w*testWindow + 10
			takeLease(t, rdb, m, now)
			admitted := int64(0)
			decide := func(at int64, real bool) {
				d, c := m.Request(at, "k", 1)
				if c != nil {
					var r *Result
					var err error = &core.UnavailableError{Op: "budget script", Err: context.DeadlineExceeded}
					if real {
						r, err = Exec(ctx, rdb, m, c, c.Now)
						require.NoError(t, err)
					}
					d = m.Complete(at, c, r, err)
				}
				if d.Allowed {
					admitted++
				}
			}
			decide(now, true)   // free credit
			decide(now+1, true) // at Redis: a full entry with Redis' word
			sync := func(at int64, up bool) {
				calls := m.Tick(at)
				if !up {
					for _, c := range calls {
						m.Finish(c, nil, &core.UnavailableError{Op: "budget script", Err: context.DeadlineExceeded})
					}
					return
				}
				res, errs := ExecAll(ctx, rdb, m, calls, at)
				for i, c := range calls {
					m.Finish(c, res[i], errs[i])
				}
			}
			sync(now+50, true)
			for i := int64(0); !m.Down(); i++ { // Redis stops answering: the first call that fails
				require.Less(t, i, int64(5), "a request of k asks Redis within its grant")
				decide(now+100+i, false)
			}
			for i := range int64(4) {
				decide(now+200+i, false) // decided on the view
			}
			for i := range tc.ticksInOutage {
				sync(now+300+int64(i)*100, false)
			}
			for i := range 6 { // Redis is back; no more requests of k
				sync(now+1000+int64(i)*100, true)
			}
			require.False(t, m.Down())
			assert.Equal(t, admitted, readState(t, rdb, m, "k", w).C, "Redis counts the %d units admitted here", admitted)
		})
	}
}

// TestLimitBoundExact: the largest Limit.Max a Config accepts, MaxLimit,
// is enforced to the unit (the script's Lua numbers are exact there: two
// requests of half the limit fit, a third does not; at 2^53 the second
// was denied), and one more is refused with ErrConfig and core.ErrInvalid.
func TestLimitBoundExact(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	_, err := New(Config{PoP: "x", Limit: core.PerWindow(MaxLimit+1, testWindow*time.Millisecond), PoPs: 1}, rdb, clock)
	require.ErrorIs(t, err, ErrConfig, "Limit.Max past MaxLimit")
	require.ErrorIs(t, err, core.ErrInvalid, "Limit.Max past MaxLimit")
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(MaxLimit, testWindow*time.Millisecond), PoPs: 1, FreeCredit: -1}, rdb, clock)
	require.NoError(t, err, "Limit.Max MaxLimit is accepted")
	t.Cleanup(func() { l.Close(ctx) })
	var got []bool
	for range 3 {
		d, err := l.AllowN(ctx, "k", clock.Now(), MaxLimit/2)
		require.NoError(t, err)
		got = append(got, d.Allowed)
	}
	assert.Equal(t, []bool{true, true, false}, got, "two halves of MaxLimit fit, a third does not")
}

// TestDeadlineOnDownRedisPutsDown: the other side of
// TestCancelledCallerKeepsRedisUp. Redis refuses connections; a
// DeadlineBound decision's deadline passes while go-redis retries the
// dial (the error is context.DeadlineExceeded): that is Redis failing,
// so the next caller is decided on the view at once, without a call.
func TestDeadlineOnDownRedisPutsDown(t *testing.T) {
	_, p := redistest.Client(t)
	addr := p.Addr
	p.Stop()
	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	clock := core.NewManualClock(time.UnixMilli(w0 + 5))
	l, err := New(Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}, rdb, clock)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = l.AllowN(ctx, "k", clock.Now(), 1)
	require.ErrorIs(t, err, core.ErrUnavailable)
	calls := l.Stats().Calls
	d, err := l.AllowN(context.Background(), "other", clock.Now(), 1)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.True(t, d.Allowed, "decided on the view")
	assert.Equal(t, calls, l.Stats().Calls, "without a call")
}

// TestCallsRunOnRedisClock: a Limiter built without a clock (production)
// runs its calls at Redis on Redis' own clock: a request whose caller's
// time is a day behind is counted in Redis' window of now, not in the
// caller's, so PoPs whose clocks disagree count on one clock. Built with a
// clock, the calls carry its time (the tests' manual clocks rely on it).
func TestCallsRunOnRedisClock(t *testing.T) {
	rdb, _ := redistest.Client(t)
	ctx := context.Background()
	cfg := Config{PoP: "x", Limit: core.PerWindow(10, testWindow*time.Millisecond), PoPs: 2, FreeCredit: -1}
	l, err := New(cfg, rdb, nil)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close(ctx) })
	behind := time.Now().Add(-24 * time.Hour)
	before := core.Millis(time.Now()) / testWindow
	d, err := l.AllowN(ctx, "k", behind, 1)
	require.NoError(t, err)
	require.True(t, d.Allowed)
	require.Equal(t, core.SourceRedis, d.Source)
	after := core.Millis(time.Now()) / testWindow
	var onRedis int64
	for x := before; x <= after; x++ {
		onRedis += readState(t, rdb, l.m, "k", x).C
	}
	assert.Equal(t, int64(1), onRedis, "counted in Redis' window of now")
	assert.Equal(t, int64(0), readState(t, rdb, l.m, "k", core.Millis(behind)/testWindow).C, "not in the caller's window")

	clock := core.NewManualClock(behind)
	lc, err := New(cfg, rdb, clock)
	require.NoError(t, err)
	t.Cleanup(func() { lc.Close(ctx) })
	_, err = lc.AllowN(ctx, "j", clock.Now(), 1)
	require.NoError(t, err)
	assert.Equal(t, int64(1), readState(t, rdb, lc.m, "j", core.Millis(behind)/testWindow).C, "given a clock, counted in its window")
}
