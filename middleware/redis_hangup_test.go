package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisClientHangUpIsNoOutage: a Redis limiter (failing closed)
// behind the middleware, on a healthy Redis, under each fail mode, with
// the middleware's timeout guarding the call and inline (a trusted
// deadline). A client that hung up before its decision (its request's
// context cancelled) is reported to the error handler as a caller gone
// (matching context.Canceled, not core.ErrUnavailable) and gets no blind
// decision: no Retry-After of a fail-closed denial; FailOpen serves it as
// any undecided request. It catches a hang-up reported as a store outage
// and a fail-mode denial served for a Redis that did not fail.
func TestRedisClientHangUpIsNoOutage(t *testing.T) {
	rdb, _ := redistest.Client(t)
	l, err := redisbackend.New(rdb, core.PerWindow(10, time.Minute))
	require.NoError(t, err)
	for _, c := range hangUpCases {
		hangUp(t, c, "192.0.2.2:1000", // the next request: Redis was fine all along
			middleware.WithLimit("api", l))
	}
}

// hangUpCase is a fail mode, whether the middleware decides inline (a
// trusted deadline), and the status a client that hung up gets.
type hangUpCase struct {
	mode   middleware.FailMode
	inline bool
	want   int
}

// hangUpCases are the fail modes' answers to a client that hung up before
// its decision, on a healthy Redis: as any undecided request.
var hangUpCases = []hangUpCase{
	{middleware.FailAsLimiter, false, http.StatusServiceUnavailable},
	{middleware.FailAsLimiter, true, http.StatusServiceUnavailable},
	{middleware.FailClosed, false, http.StatusServiceUnavailable},
	{middleware.FailOpen, false, http.StatusOK},
	{middleware.FailOpen, true, http.StatusOK},
}

// hangUp serves a request from 192.0.2.1 whose context is already
// cancelled through a middleware of opts under c, and checks its status
// (c.want), that no fail-closed Retry-After came with it, that the error
// handler saw one error matching context.Canceled and not
// core.ErrUnavailable; then a live request from next gets 200.
func hangUp(t *testing.T, c hangUpCase, next string, opts ...middleware.Option) {
	t.Helper()
	var errs []error
	opts = append(opts, middleware.WithFailMode(c.mode),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
	if c.inline {
		opts = append(opts, middleware.WithTrustedDeadline())
	}
	h := newHandler(t, opts...)
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "192.0.2.1:1000"
	gone, cancel := context.WithCancel(req.Context())
	cancel() // the client hung up
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req.WithContext(gone))
	assert.Equal(t, c.want, w.Code, "%v inline %v", c.mode, c.inline)
	assert.Empty(t, w.Header().Get("Retry-After"), "%v inline %v: no fail-closed denial", c.mode, c.inline)
	if assert.Len(t, errs, 1, "%v inline %v: reported once", c.mode, c.inline) {
		assert.ErrorIs(t, errs[0], context.Canceled, "%v inline %v", c.mode, c.inline)
		assert.NotErrorIs(t, errs[0], core.ErrUnavailable, "%v inline %v: no outage", c.mode, c.inline)
	}
	wantStatus(t, get(h, next), http.StatusOK)
}
