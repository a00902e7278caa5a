package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/require"
)

// TestSlidingTIsAnUpperBound: a sliding window whose previous window
// counted units gives quota back as that window's weight fades, before
// the current window's count starts to fade. RateLimit's t then says when
// more quota has come back at the latest, not when it first does: 10 per
// minute, 10 units in the previous window, one request 30 s into this
// one leaves r=4 with t=31, and 6 s later 5 units would pass. It pins
// t = ResetAfter − w + 1 ms (a change to moreQuotaAfter fails the header
// check) and shows the wait it bounds is 25 s shorter.
func TestSlidingTIsAnUpperBound(t *testing.T) {
	clk := core.NewManualClock(epoch.Add(-time.Minute)) // 30 s into the previous minute
	l := newLocal(t, 10, time.Minute)
	h := newHandler(t, middleware.WithLimit("l", l), middleware.WithClock(clk))
	for i := 0; i < 10; i++ {
		wantStatus(t, get(h, "192.0.2.1:1"), http.StatusOK)
	}
	clk.Set(epoch)
	w := get(h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusOK)
	wantHeader(t, w, "RateLimit", `"l";r=4;t=31`)
	at := func(d time.Duration) int64 {
		p, err := l.Peek(context.Background(), "192.0.2.1", epoch.Add(d))
		require.NoError(t, err)
		return p.Remaining
	}
	require.Greater(t, at(31*time.Second), int64(4), "no more quota at t")
	require.Equal(t, int64(5), at(6*time.Second), "more quota 6 s in, 25 s before t")
}
