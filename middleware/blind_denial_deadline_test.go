package middleware_test

import (
	"context"
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

// TestBlindDenialStandsAtDeadline: under FailAsLimiter, a limit whose store
// is down denies blind (downStore: a fail-closed denial, Retry-After 2.5 s,
// to AllowN and Peek alike)
// and the limit the middleware then peeks at, looking for a counted
// denial, hangs past the deadline ignoring its context (stuck; limit 0,
// which the peeks skip, or the second with them off). The blind denial
// stands, as it does when the peek answers: 503 with the failing
// limiter's Retry-After (3), reported once to the error handler as a
// store failure. It catches the peek's hang turning a decision already
// made into none at the deadline (503 without Retry-After).
func TestBlindDenialStandsAtDeadline(t *testing.T) {
	for _, peek := range []bool{true, false} {
		t.Run(fmt.Sprintf("peek %v", peek), func(t *testing.T) {
			limits := []middleware.Option{middleware.WithLimit("stuck", newStuck(t)),
				middleware.WithLimit("down", downStore{failing{Limiter: newLocal(t, 10, time.Second)}})}
			if !peek {
				limits[0], limits[1] = limits[1], limits[0]
			}
			var mu sync.Mutex
			var errs []error
			h := newHandler(t, append(limits, middleware.WithTimeout(100*time.Millisecond),
				middleware.WithPeekFirst(peek), middleware.WithClock(core.NewManualClock(epoch)),
				middleware.WithErrorHandler(func(_ *http.Request, err error) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}))...)
			w := getAnswered(t, h, "192.0.2.1:1")
			assert.Equal(t, http.StatusServiceUnavailable, w.Code)
			assert.Equal(t, "3", w.Header().Get("Retry-After"), "the fail-closed denial's Retry-After")
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, errs, 1, "errors reported: %v", errs)
			assert.True(t, errors.Is(errs[0], core.ErrUnavailable), "error %v", errs[0])
		})
	}
}

// downStore is failing whose Peek fails as its AllowN does: a store down
// for every call.
type downStore struct{ failing }

func (d downStore) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	return d.AllowN(ctx, key, now, 1)
}
