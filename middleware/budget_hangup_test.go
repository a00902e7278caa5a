package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/edgelimit/edgelimit/sync/budget"
	"github.com/stretchr/testify/require"
)

// TestBudgetClientHangUpIsNoOutage: a FailClosed budget limiter
// behind the default middleware, on a healthy Redis. One client hangs up
// (its request's context is cancelled) while its decision needs Redis; the
// next client, another identity, must be served (200), not told the
// limiter could not decide (503).
func TestBudgetClientHangUpIsNoOutage(t *testing.T) {
	rdb, _ := redistest.Client(t)
	clk := core.NewManualClock(epoch)
	l, err := budget.New(budget.Config{PoP: "mw", Limit: core.PerWindow(10, time.Minute), PoPs: 1,
		FreeCredit: -1, FailClosed: true}, rdb, clk)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	h := newHandler(t, middleware.WithLimit("budget", l), middleware.WithClock(clk))

	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "192.0.2.1:1000"
	gone, cancel := context.WithCancel(req.Context())
	cancel() // the client hung up
	h.ServeHTTP(httptest.NewRecorder(), req.WithContext(gone))

	w := get(h, "192.0.2.2:1000")
	wantStatus(t, w, http.StatusOK)
}

// TestBudgetHangUpIsNoStoreFailure: a budget limiter (failing closed)
// behind the middleware, on a healthy Redis, under each fail mode, with
// the middleware's timeout guarding the call and inline (a trusted
// deadline). A client that hung up before its decision is reported to
// the error handler as a caller gone (matching context.Canceled, not
// core.ErrUnavailable) and answered as any undecided request, as behind a
// Redis limiter (TestRedisClientHangUpIsNoOutage): the limiter returns no
// decision for it, so it is no store failure the fail mode overrides.
// It catches a budget decision on the view, counted and reported with an
// error matching core.ErrUnavailable, for a client that left.
func TestBudgetHangUpIsNoStoreFailure(t *testing.T) {
	rdb, _ := redistest.Client(t)
	for _, c := range hangUpCases {
		clk := core.NewManualClock(epoch)
		l, err := budget.New(budget.Config{PoP: "mw", Limit: core.PerWindow(10, time.Minute), PoPs: 1,
			FreeCredit: -1, FailClosed: true}, rdb, clk)
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close(context.Background()) })
		hangUp(t, c, "192.0.2.1:1000", // the client's next request: Redis was fine all along
			middleware.WithLimit("budget", l), middleware.WithClock(clk))
	}
}
