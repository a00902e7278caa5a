package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/edgelimit/edgelimit/sync/budget"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outageBudget is a lone budget PoP (PoPs 1) with limit 5 per minute
// whose Redis has been killed after one Sync: an identity's first request of a window is
// its free credit, decided here; every later one needs Redis, whose call
// fails, and is decided on the view (the fallback) or, with FailClosed,
// denied.
func outageBudget(t *testing.T, failClosed bool) *budget.Limiter {
	t.Helper()
	base, proc := redistest.Client(t)
	// One dial, no retry: a refused connection fails the call at once.
	rdb := goredis.NewClient(&goredis.Options{Addr: base.Options().Addr, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	l, err := budget.New(budget.Config{PoP: "p1", Limit: core.PerWindow(5, time.Minute), PoPs: 1,
		FailClosed: failClosed}, rdb, core.NewManualClock(epoch))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = l.Close(ctx) // Redis is dead: the last Sync fails
	})
	// a Sync before the outage takes the PoP's free-credit lease: Redis
	// has counted it among the PoPs that may spend free credit
	require.NoError(t, l.Sync(context.Background()))
	err = proc.Kill()
	require.NoError(t, err)
	return l
}

// TestOutageFailModesCompose: with Redis really down, the limiter's own
// decision stands unless the middleware is told to override it. Eight
// requests of one identity at a limit of 5:
//
//   - default mode: a budget PoP deciding on its view serves 5 then says
//     429 (its fallback counts its own units); one with FailClosed serves
//     the free unit decided before Redis was needed, then 503 with
//     Retry-After (never more than the limit).
//   - FailOpen overrides denials made because Redis is down: the
//     FailClosed PoP's denials are served (8 of 8, as asked).
//   - FailClosed overrides every decision made while Redis is down,
//     admissions and the view's denials alike (each comes with an error
//     matching core.ErrUnavailable, the first because its call failed,
//     the others because the PoP knows Redis is down): 503 for every
//     request but the free unit decided before Redis was needed.
//
// In the default mode every 200 and 429 carries the limiter's RateLimit
// field, and every 503 its Retry-After.
func TestOutageFailModesCompose(t *testing.T) {
	const (
		ok   = http.StatusOK
		deny = http.StatusTooManyRequests
		down = http.StatusServiceUnavailable
	)
	for _, c := range []struct {
		name       string
		failClosed bool // the limiter's
		opts       []middleware.Option
		want       [8]int
	}{
		{"local fallback/default", false, nil, [8]int{ok, ok, ok, ok, ok, deny, deny, deny}},
		{"local fallback/fail-open", false, []middleware.Option{middleware.WithFailMode(middleware.FailOpen)},
			[8]int{ok, ok, ok, ok, ok, deny, deny, deny}},
		{"local fallback/fail-closed", false, []middleware.Option{middleware.WithFailMode(middleware.FailClosed)},
			[8]int{ok, down, down, down, down, down, down, down}},
		{"fail-closed/default", true, nil, [8]int{ok, down, down, down, down, down, down, down}},
		{"fail-closed/fail-open", true, []middleware.Option{middleware.WithFailMode(middleware.FailOpen)},
			[8]int{ok, ok, ok, ok, ok, ok, ok, ok}},
		{"fail-closed/fail-closed", true, []middleware.Option{middleware.WithFailMode(middleware.FailClosed)},
			[8]int{ok, down, down, down, down, down, down, down}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := outageBudget(t, c.failClosed)
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
