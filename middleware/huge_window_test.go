package middleware_test

import (
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLifetimeWindowRetryAfter: a "lifetime" quota written as the longest
// window Validate accepts (core.MaxWindow, 100 years; time.Duration's
// largest, accepted before, wrapped the ms-to-Duration conversion and told
// an allowed client t=0) on the default sliding window: an allowed client
// is told quota comes back in a century, not now; a denied one to retry in
// over a year; Peek's durations are positive.
func TestLifetimeWindowRetryAfter(t *testing.T) {
	_, err := local.New(core.PerWindow(2, time.Duration(math.MaxInt64)))
	require.ErrorIs(t, err, core.ErrInvalid, "a window past core.MaxWindow")
	l, err := local.New(core.PerWindow(2, core.MaxWindow))
	require.NoError(t, err)
	clk := core.NewManualClock(epoch)
	h := newHandler(t, middleware.WithLimit("life", l), middleware.WithClock(clk))

	w := get(h, "192.0.2.1:1000")
	wantStatus(t, w, http.StatusOK)
	assert.NotEqual(t, `"life";r=1;t=0`, w.Header().Get("RateLimit"), "allowed under a lifetime quota: t=0 says quota returns now")
	get(h, "192.0.2.1:1000")
	w = get(h, "192.0.2.1:1000")
	wantStatus(t, w, http.StatusTooManyRequests)
	ra, err := strconv.ParseInt(w.Header().Get("Retry-After"), 10, 64)
	require.NoError(t, err)
	assert.Greater(t, ra, int64(365*24*3600), "Retry-After %d s for a quota spent for a century (RateLimit %q)", ra, w.Header().Get("RateLimit"))

	d, _ := l.Peek(t.Context(), "192.0.2.1", clk.Now())
	assert.GreaterOrEqual(t, d.RetryAfter, time.Duration(0), "Peek: %+v", d)
	assert.GreaterOrEqual(t, d.ResetAfter, time.Duration(0), "Peek: %+v", d)
}
