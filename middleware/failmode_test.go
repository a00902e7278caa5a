package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stuck is a limiter whose calls (AllowN and Peek) hang until release is
// closed, whatever their context says: the worst store a middleware can
// meet.
type stuck struct {
	core.Limiter
	release chan struct{}
}

func (s *stuck) AllowN(context.Context, string, time.Time, int64) (core.Decision, error) {
	<-s.release
	return core.Decision{}, errors.New("too late")
}

func (s *stuck) Peek(context.Context, string, time.Time) (core.Decision, error) {
	<-s.release
	return core.Decision{}, errors.New("too late")
}

func newStuck(t *testing.T) *stuck {
	s := &stuck{Limiter: newLocal(t, 10, time.Second), release: make(chan struct{})}
	t.Cleanup(func() { close(s.release) })
	return s
}

// failing is a limiter whose store is down: every call fails at once, with
// a fail-closed denial (RetryAfter 2.5 s), or a fail-open admission when
// open is set.
type failing struct {
	core.Limiter
	open bool
}

func (f failing) AllowN(context.Context, string, time.Time, int64) (core.Decision, error) {
	d := core.Decision{Limit: 10, RetryAfter: 2500 * time.Millisecond, Source: core.SourceFailClosed}
	if f.open {
		d = core.Decision{Allowed: true, Limit: 10, Source: core.SourceFailOpen}
	}
	return d, &core.UnavailableError{Op: "test", Err: errors.New("connection refused")}
}

func TestStalledLimiterFailsOpenWithinTimeout(t *testing.T) {
	var errs atomic.Int32
	h := newHandler(t, middleware.WithLimit("l", newStuck(t)), middleware.WithTimeout(50*time.Millisecond),
		middleware.WithFailMode(middleware.FailOpen),
		middleware.WithErrorHandler(func(_ *http.Request, err error) {
			if errors.Is(err, core.ErrUnavailable) {
				errs.Add(1)
			}
		}))
	w := getAnswered(t, h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusOK)
	wantHeader(t, w, "RateLimit", "")
	wantHeader(t, w, "RateLimit-Policy", `"l";q=10;w=1`)
	require.Equal(t, int32(1), errs.Load(), "error handler saw %d ErrUnavailable, want 1", errs.Load())
}

// TestStalledLimiterRefusedWithinTimeout: with no decision by the deadline
// there is none to keep, so both FailAsLimiter (the default) and
// FailClosed answer 503.
func TestStalledLimiterRefusedWithinTimeout(t *testing.T) {
	for _, mode := range []middleware.FailMode{middleware.FailAsLimiter, middleware.FailClosed} {
		h := newHandler(t, middleware.WithLimit("l", newStuck(t)), middleware.WithTimeout(50*time.Millisecond),
			middleware.WithFailMode(mode))
		wantStatus(t, getAnswered(t, h, "192.0.2.1:1"), http.StatusServiceUnavailable)
	}
}

// TestFailingLimiterDecisionStandsUnlessOverridden: the limiter's own
// fail-mode decision is kept by default (a fail-closed denial is 503 with
// its Retry-After, a fail-open admission is served, neither with a RateLimit
// field since nothing was counted); FailOpen and FailClosed override it.
func TestFailingLimiterDecisionStandsUnlessOverridden(t *testing.T) {
	for _, c := range []struct {
		open  bool
		mode  middleware.FailMode
		want  int
		retry string
	}{
		{false, middleware.FailAsLimiter, http.StatusServiceUnavailable, "3"},
		{false, middleware.FailOpen, http.StatusOK, ""},
		{false, middleware.FailClosed, http.StatusServiceUnavailable, ""},
		{true, middleware.FailAsLimiter, http.StatusOK, ""},
		{true, middleware.FailOpen, http.StatusOK, ""},
		{true, middleware.FailClosed, http.StatusServiceUnavailable, ""},
	} {
		var errs int
		h := newHandler(t, middleware.WithLimit("l", failing{newLocal(t, 10, time.Second), c.open}),
			middleware.WithFailMode(c.mode), middleware.WithErrorHandler(func(_ *http.Request, err error) {
				if errors.Is(err, core.ErrUnavailable) {
					errs++
				}
			}))
		w := get(h, "192.0.2.1:1")
		assert.Equal(t, c.want, w.Code, "limiter open=%v, %s: status %d Retry-After %q RateLimit %q, want %d %q \"\"", c.open, c.mode, w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"), c.want, c.retry)
		assert.Equal(t, c.retry, w.Header().Get("Retry-After"), "limiter open=%v, %s: status %d Retry-After %q RateLimit %q, want %d %q \"\"", c.open, c.mode, w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"), c.want, c.retry)
		assert.Equal(t, "", w.Header().Get("RateLimit"), "limiter open=%v, %s: status %d Retry-After %q RateLimit %q, want %d %q \"\"", c.open, c.mode, w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"), c.want, c.retry)
		assert.Equal(t, 1, errs, "limiter open=%v, %s: error handler saw %d ErrUnavailable, want 1", c.open, c.mode, errs)
	}
}

func TestFailingSecondLimitFailsTheRequest(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("ok", newLocal(t, 10, time.Second)),
		middleware.WithLimit("down", failing{Limiter: newLocal(t, 10, time.Second)}),
		middleware.WithPeekFirst(false), middleware.WithFailMode(middleware.FailClosed))
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusServiceUnavailable)
}

func TestNoTimeoutCallsDirectly(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("l", newLocal(t, 1, time.Second)), middleware.WithTimeout(0))
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusOK)
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusTooManyRequests)
}

// polite is a limiter that waits for its context, then fails.
type polite struct{ core.Limiter }

func (polite) AllowN(ctx context.Context, _ string, _ time.Time, _ int64) (core.Decision, error) {
	<-ctx.Done()
	return core.Decision{}, ctx.Err()
}

func TestTrustedDeadlineFailsWithinTimeout(t *testing.T) {
	var got error
	h := newHandler(t, middleware.WithLimit("l", polite{newLocal(t, 10, time.Second)}),
		middleware.WithTimeout(50*time.Millisecond), middleware.WithTrustedDeadline(),
		middleware.WithFailMode(middleware.FailClosed),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { got = err }))
	wantStatus(t, getAnswered(t, h, "192.0.2.1:1"), http.StatusServiceUnavailable)
	require.ErrorIs(t, got, core.ErrUnavailable, "error %v, want ErrUnavailable wrapping DeadlineExceeded", got)
	require.ErrorIs(t, got, context.DeadlineExceeded, "error %v, want ErrUnavailable wrapping DeadlineExceeded", got)
}
