package middleware_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailOpenHangingLimitStillEnforcesOthers: under FailOpen, a limit
// that gives no decision at all does not stop the others from being asked,
// as a limit that denies blind does not (TestFailOpenStillEnforcesHealthyLimits).
// A limit whose calls hang past the limiters' deadline, ignoring their
// context (stuck: a Redis that never answers behind a go-redis client
// without ContextTimeoutEnabled), is left behind there; one that honours
// its context and returns its error with no decision (polite, under a
// trusted deadline) is passed over. Either way a healthy local limit of 1
// per minute beside it (DeadlineBound, as a local limiter may say: it
// never waits, so its decision is waited for however late a loaded
// machine runs it) is still asked and counts: three requests of one
// identity give 200, 429, 429, in either order of the limits, with or
// without the peeks, and each is reported once to the error handler. It
// catches a hang (or an error with no decision) ending the decision before
// the healthy limit is asked: every request served, none counted.
func TestFailOpenHangingLimitStillEnforcesOthers(t *testing.T) {
	for _, c := range []struct {
		polite, hungFirst, peek bool
	}{{false, true, true}, {false, true, false}, {false, false, true}, {false, false, false},
		{true, true, true}, {true, true, false}, {true, false, true}, {true, false, false}} {
		t.Run(fmt.Sprintf("polite %v, first %v, peek %v", c.polite, c.hungFirst, c.peek), func(t *testing.T) {
			var hung core.Limiter = newStuck(t)
			opts := []middleware.Option{middleware.WithTimeout(100 * time.Millisecond)}
			if c.polite {
				hung = polite{newLocal(t, 10, time.Second)}
				opts = append(opts, middleware.WithTrustedDeadline())
			}
			healthy := deadlineBound{newLocal(t, 1, time.Minute)}
			limits := []middleware.Option{middleware.WithLimit("healthy", healthy), middleware.WithLimit("hung", hung)}
			if c.hungFirst {
				limits[0], limits[1] = limits[1], limits[0]
			}
			var mu sync.Mutex
			var errs []error
			h := newHandler(t, append(append(opts, limits...), middleware.WithFailMode(middleware.FailOpen),
				middleware.WithPeekFirst(c.peek), middleware.WithClock(core.NewManualClock(epoch)),
				middleware.WithErrorHandler(func(_ *http.Request, err error) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}))...)
			var got [3]int
			for i := range got {
				w := getAnswered(t, h, "192.0.2.1:1")
				got[i] = w.Code
				if w.Code == http.StatusTooManyRequests {
					assert.Equal(t, `"healthy";r=0;t=31`, w.Header().Get("RateLimit"), "request %d", i)
				}
			}
			require.Equal(t, [3]int{http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests}, got,
				"statuses %v: the healthy limit of 1 per minute was not enforced", got)
			mu.Lock()
			defer mu.Unlock()
			for _, err := range errs {
				if !c.polite {
					assert.True(t, errors.Is(err, core.ErrUnavailable), "error %v, want ErrUnavailable (deadline)", err)
				}
			}
		})
	}
}

// deadlineBound is a limiter that says it is middleware.DeadlineBound, as
// one that never waits (a local limiter) may.
type deadlineBound struct{ core.Limiter }

func (deadlineBound) DeadlineBound() bool { return true }

// TestFailOpenHangingLimitLeftAtLimitersDeadline: under FailOpen, a limit
// whose call still runs when the limiters' context expires (stuck) is left
// behind then, not at the middleware's deadline, so a limit not
// DeadlineBound (a plain local limit of 1 per minute, whose decision is
// not waited for past the deadline) is still asked, in the margin before
// the deadline: of 8 requests of one identity, all are answered 200 or
// 429 and at least one is 429 from it. A count, not a sequence: a stall of
// the machine longer than that margin (10 ms) may still pass it over on a
// request. It catches the stuck call waited for until the deadline, which
// leaves no time for such a limit: every request served.
func TestFailOpenHangingLimitLeftAtLimitersDeadline(t *testing.T) {
	for _, c := range []struct{ stuckFirst, peek bool }{{true, false}, {false, true}} {
		t.Run(fmt.Sprintf("first %v, peek %v", c.stuckFirst, c.peek), func(t *testing.T) {
			limits := []middleware.Option{middleware.WithLimit("local", newLocal(t, 1, time.Minute)),
				middleware.WithLimit("stuck", newStuck(t))}
			if c.stuckFirst {
				limits[0], limits[1] = limits[1], limits[0]
			}
			h := newHandler(t, append(limits, middleware.WithTimeout(100*time.Millisecond),
				middleware.WithFailMode(middleware.FailOpen), middleware.WithPeekFirst(c.peek),
				middleware.WithClock(core.NewManualClock(epoch)))...)
			denied := 0
			for i := range 8 {
				w := getAnswered(t, h, "192.0.2.1:1")
				require.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, w.Code, "request %d", i)
				if w.Code == http.StatusTooManyRequests {
					denied++
					assert.Equal(t, `"local";r=0;t=31`, w.Header().Get("RateLimit"), "request %d", i)
				}
			}
			require.Positive(t, denied, "no request of 8 denied: the local limit of 1 per minute was never asked")
		})
	}
}

// TestFailOpenDeadlineStillAsksBoundLimits: under FailOpen, two limits
// whose calls hang (stuck, stuck) before a DeadlineBound one: the first is
// left behind at the limiters' deadline, the second hangs on until the
// middleware's; then the DeadlineBound limit is still asked and waited for
// (it answers by its context's deadline, passed), so a limit of 1 per
// minute gives 200, 429, 429, with or without the peeks. It catches the
// deadline ending the decision when a call still runs: every request
// served.
func TestFailOpenDeadlineStillAsksBoundLimits(t *testing.T) {
	for _, peek := range []bool{false, true} {
		t.Run(fmt.Sprintf("peek %v", peek), func(t *testing.T) {
			h := newHandler(t, middleware.WithLimit("stuck", newStuck(t)), middleware.WithLimit("stuck too", newStuck(t)),
				middleware.WithLimit("bound", deadlineBound{newLocal(t, 1, time.Minute)}),
				middleware.WithTimeout(100*time.Millisecond), middleware.WithFailMode(middleware.FailOpen),
				middleware.WithPeekFirst(peek), middleware.WithClock(core.NewManualClock(epoch)))
			var got [3]int
			for i := range got {
				got[i] = getAnswered(t, h, "192.0.2.1:1").Code
			}
			require.Equal(t, [3]int{http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests}, got,
				"statuses %v: the DeadlineBound limit of 1 per minute was not enforced", got)
		})
	}
}
