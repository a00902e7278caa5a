package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/edgelimit/edgelimit/sync/hybrid"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outageHybrid is a hybrid node with limit 5 per minute whose Redis has
// been killed: with Margin 0.5 the first two requests of an identity are
// decided locally and every later one that fits is sent to Redis, which
// fails.
func outageHybrid(t *testing.T, failClosed bool) *hybrid.Node {
	t.Helper()
	base, proc := redistest.Client(t)
	// One dial, no retry: a refused connection fails the call at once.
	rdb := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	n, err := hybrid.New(hybrid.Config{PoP: "p1", Limit: core.PerWindow(5, time.Minute), Redis: rdb,
		Margin: 0.5, FailClosed: failClosed})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = n.Close(ctx) // Redis is dead: the final flush fails
	})
	err = proc.Kill()
	require.NoError(t, err)
	return n
}

// TestOutageFailModesCompose: with Redis really down, the limiter's own
// decision stands unless the middleware is told to override it. Eight
// requests of one identity at a limit of 5:
//
//   - default mode: a hybrid deciding locally serves 5 then says 429 (its
//     local fallback counts); a hybrid with FailClosed serves the 2 decided
//     before Redis was needed, then 503 with Retry-After (never more than
//     the limit).
//   - FailOpen overrides denials made because Redis is down: the
//     FailClosed hybrid's denials are served (8 of 8, as asked).
//   - FailClosed overrides admissions made while Redis is down: 503 for
//     every request Redis should have decided, 429 once the local count is
//     over the limit.
//
// In the default mode every 200 and 429 carries the limiter's RateLimit
// field, and every 503 its Retry-After. Before, the default mode (fail open)
// served 8 of 8 behind a FailClosed hybrid, the two fail modes cancelling
// out, and served the local fallback's admissions without a RateLimit field.
func TestOutageFailModesCompose(t *testing.T) {
	const (
		ok   = http.StatusOK
		deny = http.StatusTooManyRequests
		down = http.StatusServiceUnavailable
	)
	for _, c := range []struct {
		name       string
		failClosed bool // the hybrid's
		opts       []middleware.Option
		want       [8]int
	}{
		{"local fallback/default", false, nil, [8]int{ok, ok, ok, ok, ok, deny, deny, deny}},
		{"local fallback/fail-open", false, []middleware.Option{middleware.WithFailMode(middleware.FailOpen)},
			[8]int{ok, ok, ok, ok, ok, deny, deny, deny}},
		{"local fallback/fail-closed", false, []middleware.Option{middleware.WithFailMode(middleware.FailClosed)},
			[8]int{ok, ok, down, down, down, deny, deny, deny}},
		{"fail-closed/default", true, nil, [8]int{ok, ok, down, down, down, down, down, down}},
		{"fail-closed/fail-open", true, []middleware.Option{middleware.WithFailMode(middleware.FailOpen)},
			[8]int{ok, ok, ok, ok, ok, ok, ok, ok}},
		{"fail-closed/fail-closed", true, []middleware.Option{middleware.WithFailMode(middleware.FailClosed)},
			[8]int{ok, ok, down, down, down, down, down, down}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := outageHybrid(t, c.failClosed)
			// The middleware's deadline is set to what only a hang reaches:
			// a refused connection (go-redis dials again several times)
			// could outlast the default 100 ms on a loaded machine, and the
			// middleware would then answer 503 with no decision at all,
			// which is not what this test is about.
			opts := append([]middleware.Option{middleware.WithLimit("l", n),
				middleware.WithClock(core.NewManualClock(epoch)), middleware.WithTimeout(hang)}, c.opts...)
			h := newHandler(t, opts...)
			var got [8]int
			for i := range got {
				w := get(h, "192.0.2.1:1")
				got[i] = w.Code
				if c.opts != nil {
					continue
				}
				// The limiter's decision stands, with what it says.
				if w.Code != down {
					assert.NotEmpty(t, w.Header().Get("RateLimit"), "request %d: %d without a RateLimit field", i, w.Code)
				} else {
					assert.NotEmpty(t, w.Header().Get("Retry-After"), "request %d: 503 from the limiter's fail-closed denial without Retry-After", i)
				}
			}
			require.Equal(t, c.want, got, "statuses %v, want %v", got, c.want)
		})
	}
}
