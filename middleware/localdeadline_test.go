package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundBudget is a lone budget PoP (10 per minute) whose go-redis client
// has ContextTimeoutEnabled, on a private redis-server, its clock frozen
// at epoch, with identity "full" already at its limit: its 10 units were
// admitted and reported (a Sync), so Redis' last reply left it no
// headroom and the view denies it.
func boundBudget(t *testing.T) *budget.Limiter {
	t.Helper()
	proc := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: proc.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	l, err := budget.New(budget.Config{PoP: "p", Limit: core.PerWindow(10, time.Minute), PoPs: 1}, rdb, core.NewManualClock(epoch))
	require.NoError(t, err, "budget.New")
	t.Cleanup(func() { l.Close(context.Background()) })
	require.True(t, l.DeadlineBound(), "a limiter whose client has ContextTimeoutEnabled is DeadlineBound")
	ctx := context.Background()
	for i := range 10 {
		d, err := l.AllowN(ctx, "full", epoch, 1)
		require.NoError(t, err)
		require.True(t, d.Allowed, "unit %d of a limit of 10", i+1)
	}
	require.NoError(t, l.Sync(ctx), "a Sync on a healthy Redis")
	d, err := l.AllowN(ctx, "full", epoch, 1)
	require.NoError(t, err)
	require.False(t, d.Allowed, "the 11th unit of a limit of 10")
	return l
}

// TestStalledDeadlineLocalDecisionDecides: behind the default middleware
// (100 ms deadline, the guard on), a request whose context is already done
// (a machine that stalled past the deadline before the decision ran) still
// gets the budget limiter's decision from its view: a new identity's
// first request is served from free credit, an identity the view knows is
// at its limit gets 429, never 503, and no Redis call is made. Through
// metrics.Wrap too.
func TestStalledDeadlineLocalDecisionDecides(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		name := map[bool]string{false: "limiter", true: "metrics.Wrap(limiter)"}[wrapped]
		t.Run(name, func(t *testing.T) {
			b := boundBudget(t)
			var l core.Limiter = b
			if wrapped {
				l = metrics.New().Wrap("api", l)
			}
			var errs []error
			m, err := middleware.New(middleware.WithLimit("api", l), middleware.WithClock(core.NewManualClock(epoch)),
				middleware.WithKeyFunc(middleware.HeaderKey("X-Client")),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
			require.NoError(t, err, "middleware.New")
			served := 0
			h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++ }))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			calls := b.Stats().Calls
			ask := func(client string) *httptest.ResponseRecorder {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
				r.Header.Set("X-Client", client)
				h.ServeHTTP(w, r)
				return w
			}
			w := ask("new")
			assert.Equal(t, http.StatusOK, w.Code, "a new identity's first request, context already done: free credit")
			assert.NotEmpty(t, w.Header().Get("RateLimit"), "it carries the decision's RateLimit field")
			for i := range 3 {
				w := ask("full")
				assert.Equal(t, http.StatusTooManyRequests, w.Code, "request %d of an identity at its limit, context already done", i+1)
				assert.NotEmpty(t, w.Header().Get("RateLimit"), "request %d carries the decision's RateLimit field", i+1)
			}
			assert.Equal(t, 1, served, "the request the view had room for was served")
			assert.Empty(t, errs, "no limiter error or timeout for decisions from the view")
			assert.Equal(t, calls, b.Stats().Calls, "no Redis call")
		})
	}
}

// TestStalledDeadlineLocalBackendDecides: a local limiter is DeadlineBound
// (it waits on no store), itself and through metrics.Wrap, so behind the
// default middleware a request whose context is already done (a machine
// that stalled past the deadline before the decision ran) still gets its
// decision: the first request of an identity with a limit of 1 is served,
// the next three get 429, never 503, and no timeout is reported. It
// catches the method dropped (the guard then answers 503 when it sees the
// deadline before the decision).
func TestStalledDeadlineLocalBackendDecides(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		name := map[bool]string{false: "limiter", true: "metrics.Wrap(limiter)"}[wrapped]
		t.Run(name, func(t *testing.T) {
			lim, err := local.New(core.PerWindow(1, time.Minute))
			require.NoError(t, err)
			var l core.Limiter = lim
			if wrapped {
				l = metrics.New().Wrap("api", l)
			}
			b, isBound := l.(middleware.DeadlineBound)
			require.True(t, isBound && b.DeadlineBound(), "a local limiter is DeadlineBound")
			var errs []error
			m, err := middleware.New(middleware.WithLimit("api", l), middleware.WithClock(core.NewManualClock(epoch)),
				middleware.WithKeyFunc(middleware.HeaderKey("X-Client")),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
			require.NoError(t, err, "middleware.New")
			h := m.Wrap(ok)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for i := range 4 {
				w := httptest.NewRecorder()
				r := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
				r.Header.Set("X-Client", "c")
				h.ServeHTTP(w, r)
				want := map[bool]int{true: http.StatusOK, false: http.StatusTooManyRequests}[i == 0]
				assert.Equal(t, want, w.Code, "request %d of a limit of 1, context already done", i+1)
			}
			assert.Empty(t, errs, "no limiter error or timeout for local decisions")
		})
	}
}
