package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
)

// epoch is a fixed start time, 10 s into a minute so windows do not roll
// during a test by accident.
var epoch = time.Unix(1_700_000_010, 0)

// recorder wraps a limiter and keeps the last decision of each kind, so a
// test can check the response headers against what the limiter said.
type recorder struct {
	core.Limiter
	mu     sync.Mutex
	allow  core.Decision
	peek   core.Decision
	allows int
	peeks  int
}

func (r *recorder) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	d, err := r.Limiter.AllowN(ctx, key, now, n)
	r.mu.Lock()
	r.allow, r.allows = d, r.allows+1
	r.mu.Unlock()
	return d, err
}

func (r *recorder) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	d, err := r.Limiter.Peek(ctx, key, now)
	r.mu.Lock()
	r.peek, r.peeks = d, r.peeks+1
	r.mu.Unlock()
	return d, err
}

func (r *recorder) lastAllow() core.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.allow
}

func newLocal(t *testing.T, max int64, window time.Duration) *recorder {
	t.Helper()
	l, err := local.New(core.PerWindow(max, window))
	if err != nil {
		t.Fatalf("local.New: %v", err)
	}
	return &recorder{Limiter: l}
}

// ok is the wrapped handler: 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok"))
})

func newHandler(t *testing.T, opts ...middleware.Option) http.Handler {
	t.Helper()
	m, err := middleware.New(opts...)
	if err != nil {
		t.Fatalf("middleware.New: %v", err)
	}
	return m.Wrap(ok)
}

// get sends one GET from peer (an "ip:port") with the given header pairs.
func get(h http.Handler, peer string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = peer
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func wantStatus(t *testing.T, w *httptest.ResponseRecorder, code int) {
	t.Helper()
	if w.Code != code {
		t.Fatalf("status %d, want %d (body %q, headers %v)", w.Code, code, w.Body.String(), w.Header())
	}
}

func wantHeader(t *testing.T, w *httptest.ResponseRecorder, name, value string) {
	t.Helper()
	if got := w.Header().Get(name); got != value {
		t.Fatalf("%s = %q, want %q", name, got, value)
	}
}
