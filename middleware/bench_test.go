package middleware_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/require"
)

// BenchmarkMiddleware measures the middleware's own cost on an in-process
// limiter that always allows: with the default timeout guard (the decision
// on its own goroutine), with WithTrustedDeadline (a context deadline only)
// and with no timeout at all.
func BenchmarkMiddleware(b *testing.B) {
	for _, c := range []struct {
		name string
		opt  middleware.Option
	}{
		{"guarded", middleware.WithTimeout(middleware.DefaultTimeout)},
		{"trusted-deadline", middleware.WithTrustedDeadline()},
		{"no-timeout", middleware.WithTimeout(0)},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := &testing.T{}
			l := newLocal(t, 1<<40, time.Hour)
			m, err := middleware.New(middleware.WithLimit("l", l), c.opt)
			require.NoError(b, err)
			h := m.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = "192.0.2.1:1"
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(discard{}, req)
			}
		})
	}
}

// discard is a ResponseWriter that keeps nothing but a header map.
type discard struct{}

var discardHeader = http.Header{}

func (discard) Header() http.Header         { clear(discardHeader); return discardHeader }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
