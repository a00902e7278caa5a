package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundNode is a hybrid node (10 per minute, every decision from its
// view) whose go-redis client has ContextTimeoutEnabled, on a private
// redis-server, its clock frozen at epoch.
func boundNode(t *testing.T) *hybrid.Node {
	t.Helper()
	proc := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: proc.Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	n, err := hybrid.New(hybrid.Config{PoP: "p", Limit: core.PerWindow(10, time.Minute), Redis: rdb,
		Clock: core.NewManualClock(epoch), Resync: -1})
	require.NoError(t, err, "hybrid.New")
	t.Cleanup(func() { n.Close(context.Background()) })
	require.True(t, n.DeadlineBound(), "a node whose client has ContextTimeoutEnabled is DeadlineBound")
	return n
}

// TestStalledDeadlineLocalDecisionDecides: behind the default middleware
// (100 ms deadline, the guard on), a request whose context is already done
// (a machine that stalled past the deadline before the decision ran) still
// gets the hybrid node's decision from its view: served while the view has
// room, 429 once over, never 503. Through metrics.Wrap too.
func TestStalledDeadlineLocalDecisionDecides(t *testing.T) {
	for _, wrapped := range []bool{false, true} {
		name := map[bool]string{false: "node", true: "metrics.Wrap(node)"}[wrapped]
		t.Run(name, func(t *testing.T) {
			var l core.Limiter = boundNode(t)
			if wrapped {
				l = metrics.New().Wrap("api", l)
			}
			var errs []error
			m, err := middleware.New(middleware.WithLimit("api", l), middleware.WithClock(core.NewManualClock(epoch)),
				middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
			require.NoError(t, err, "middleware.New")
			served := 0
			h := m.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { served++ }))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			for i := range 12 {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
				want := http.StatusOK
				if i >= 10 {
					want = http.StatusTooManyRequests
				}
				assert.Equal(t, want, w.Code, "request %d of a limit of 10, context already done", i+1)
				assert.NotEmpty(t, w.Header().Get("RateLimit"), "request %d carries the decision's RateLimit field", i+1)
			}
			assert.Equal(t, 10, served, "the 10 requests the view had room for were served")
			assert.Empty(t, errs, "no limiter error or timeout for decisions from the view")
		})
	}
}
