package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/metrics"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/require"
)

// TestMiddlewarePeekDenialsCounted: behind the middleware, a request the
// second limit denies on its peek gets 429 with no AllowN on any limit;
// those denials are counted in peeks_total (decisions_total counts AllowN
// and Allow only). Five requests at 2 per minute on the second limit: 2
// served, 3 denied on a peek. It catches Wrap's Peek forwarding without
// counting, which left every such 429 out of the metrics.
func TestMiddlewarePeekDenialsCounted(t *testing.T) {
	c := metrics.New()
	reg := register(t, c)
	mw, err := middleware.New(middleware.WithLimit("short", c.Wrap("short", newLocal(t, 100))),
		middleware.WithLimit("daily", c.Wrap("daily", newLocal(t, 2))),
		middleware.WithClock(core.NewManualClock(epoch)))
	require.NoError(t, err)
	h := mw.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	var got [5]int
	for i := range got {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "192.0.2.1:1"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		got[i] = w.Code
	}
	require.Equal(t, [5]int{200, 200, 429, 429, 429}, got)
	wantCounters(t, reg, "edgelimit_decisions_total", map[string]float64{
		"short/allowed/local": 2,
		"daily/allowed/local": 2,
	})
	wantCounters(t, reg, "edgelimit_peeks_total", map[string]float64{
		"daily/allowed/local": 2,
		"daily/denied/local":  3,
	})
}
