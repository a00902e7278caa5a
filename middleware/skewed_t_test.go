package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/require"
)

// TestSkewedClockTOfAFixedWindow: two instances share one limit (as two
// servers share a Redis limiter), the second's clock 2 s behind the
// first's. Just after a window starts on the first, the second counts its
// requests in that window too (the state is ahead of its clock) and more
// quota comes back only at that window's end, 12 s on its clock: its
// RateLimit field says t=10, the window (t is never more than it), not
// t=3. It catches moreQuotaAfter applying the sliding window's rule,
// ResetAfter − w + 1 ms, to any decision whose ResetAfter passes w.
func TestSkewedClockTOfAFixedWindow(t *testing.T) {
	for _, alg := range []core.Algorithm{core.FixedWindow, core.SlidingLog} {
		l, err := local.New(core.Limit{Max: 10, Window: 10 * time.Second, Algorithm: alg}, local.WithMonotonic(frozenTime{}))
		require.NoError(t, err)
		ahead := newHandler(t, middleware.WithLimit("l", l), middleware.WithClock(core.NewManualClock(epoch))) // epoch starts a 10-s window
		behind := newHandler(t, middleware.WithLimit("l", l), middleware.WithClock(core.NewManualClock(epoch.Add(-2*time.Second))))
		wantStatus(t, get(ahead, "192.0.2.1:1"), http.StatusOK)
		w := get(behind, "192.0.2.1:1")
		wantStatus(t, w, http.StatusOK)
		require.Equal(t, `"l";r=8;t=10`, w.Header().Get("RateLimit"), "%s: 12 s to more quota on this clock", alg)
	}
}
