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
)

// stuck is a limiter whose calls hang until release is closed, whatever
// their context says: the worst store a middleware can meet.
type stuck struct {
	core.Limiter
	release chan struct{}
}

func (s *stuck) AllowN(context.Context, string, time.Time, int64) (core.Decision, error) {
	<-s.release
	return core.Decision{}, errors.New("too late")
}

func newStuck(t *testing.T) *stuck {
	s := &stuck{Limiter: newLocal(t, 10, time.Second), release: make(chan struct{})}
	t.Cleanup(func() { close(s.release) })
	return s
}

// failing is a limiter whose store is down: every call fails at once.
type failing struct{ core.Limiter }

func (f failing) AllowN(context.Context, string, time.Time, int64) (core.Decision, error) {
	return core.Decision{Source: core.SourceFailClosed},
		&core.UnavailableError{Op: "test", Err: errors.New("connection refused")}
}

func TestStalledLimiterFailsOpenWithinTimeout(t *testing.T) {
	var errs atomic.Int32
	h := newHandler(t, middleware.WithLimit("l", newStuck(t)), middleware.WithTimeout(50*time.Millisecond),
		middleware.WithErrorHandler(func(_ *http.Request, err error) {
			if errors.Is(err, core.ErrUnavailable) {
				errs.Add(1)
			}
		}))
	start := time.Now()
	w := get(h, "192.0.2.1:1")
	took := time.Since(start)
	wantStatus(t, w, http.StatusOK)
	wantHeader(t, w, "RateLimit", "")
	wantHeader(t, w, "RateLimit-Policy", `"l";q=10;w=1`)
	if took > 500*time.Millisecond {
		t.Fatalf("answered after %s with a 50ms timeout", took)
	}
	if errs.Load() != 1 {
		t.Fatalf("error handler saw %d ErrUnavailable, want 1", errs.Load())
	}
}

func TestStalledLimiterFailsClosedWithinTimeout(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("l", newStuck(t)), middleware.WithTimeout(50*time.Millisecond),
		middleware.WithFailMode(middleware.FailClosed))
	start := time.Now()
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusServiceUnavailable)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("answered after %s with a 50ms timeout", took)
	}
}

func TestFailingLimiterFollowsMiddlewareFailMode(t *testing.T) {
	l := failing{newLocal(t, 10, time.Second)}
	open := newHandler(t, middleware.WithLimit("l", l))
	wantStatus(t, get(open, "192.0.2.1:1"), http.StatusOK)
	closed := newHandler(t, middleware.WithLimit("l", l), middleware.WithFailMode(middleware.FailClosed))
	wantStatus(t, get(closed, "192.0.2.1:1"), http.StatusServiceUnavailable)
}

func TestFailingSecondLimitFailsTheRequest(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("ok", newLocal(t, 10, time.Second)),
		middleware.WithLimit("down", failing{newLocal(t, 10, time.Second)}),
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
	start := time.Now()
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusServiceUnavailable)
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("answered after %s with a 50ms timeout", took)
	}
	if !errors.Is(got, core.ErrUnavailable) || !errors.Is(got, context.DeadlineExceeded) {
		t.Fatalf("error %v, want ErrUnavailable wrapping DeadlineExceeded", got)
	}
}
