package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
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

// frozenTime is a local.Monotonic that never advances: the tests' local
// limiters age their states by the stamps the middleware gives them alone,
// not by real time, which a loaded machine's stall would advance past a
// short window's lifetime between two requests of a test.
type frozenTime struct{}

func (frozenTime) MonotonicMillis() int64 { return 0 }

func newLocal(t *testing.T, max int64, window time.Duration) *recorder {
	t.Helper()
	l, err := local.New(core.PerWindow(max, window), local.WithMonotonic(frozenTime{}))
	require.NoError(t, err, "local.New")
	return &recorder{Limiter: l}
}

// ok is the wrapped handler: 200 "ok".
var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok"))
})

// newHandler is the middleware built with opts, around ok.
//
// The middleware's deadline is set to hang unless opts set their own: the
// tests check what is decided, and DefaultTimeout (100 ms) could turn a
// loaded machine's stall of a local decision into a 503. The tests of the
// deadline itself pass WithTimeout.
func newHandler(t *testing.T, opts ...middleware.Option) http.Handler {
	t.Helper()
	m, err := middleware.New(append([]middleware.Option{middleware.WithTimeout(hang)}, opts...)...)
	require.NoError(t, err, "middleware.New")
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

// hang is how long a test waits for an answer before calling it a hang:
// far beyond any delay of a loaded machine, and far under the waits the
// deadline tests tell apart (a limiter that returns only when the test
// ends, a Redis client with no read timeout and a backend timeout of an
// hour).
const hang = 30 * time.Second

// getAnswered is get run in a goroutine, failing the test if no answer
// comes within hang. The tests that use it stall the limiter for longer
// than that, so an answer at all shows the middleware's deadline ended
// the wait; how soon after the deadline is the scheduler's business, not
// something these tests bound.
func getAnswered(t *testing.T, h http.Handler, peer string) *httptest.ResponseRecorder {
	t.Helper()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- get(h, peer) }()
	select {
	case w := <-done:
		return w
	case <-time.After(hang):
		require.FailNow(t, fmt.Sprintf("no answer within %s: the middleware's deadline did not end the limiter's wait", hang))
		return nil
	}
}

func wantStatus(t *testing.T, w *httptest.ResponseRecorder, code int) {
	t.Helper()
	require.Equal(t, code, w.Code, "status %d, want %d (body %q, headers %v)", w.Code, code, w.Body.String(), w.Header())
}

func wantHeader(t *testing.T, w *httptest.ResponseRecorder, name, value string) {
	t.Helper()
	got := w.Header().Get(name)
	require.Equal(t, value, got, "%s = %q, want %q", name, got, value)
}

// deadRedis is a client of a redis-server already killed, with one dial
// and no retry: every call fails at once with a refused connection.
func deadRedis(t *testing.T) *goredis.Client {
	t.Helper()
	base, proc := redistest.Client(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	require.NoError(t, proc.Kill())
	return rdb
}
