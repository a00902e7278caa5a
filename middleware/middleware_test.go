package middleware_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ceilSec is the test's own rounding of a duration up to whole seconds.
func ceilSec(d time.Duration) int64 { return int64(math.Ceil(d.Seconds())) }

// wantRateLimit checks RateLimit (and Retry-After on a denial) against the
// decision d the limiter of window win returned: t is when more quota comes
// back, which for a sliding window's ResetAfter past one window (up to 2
// windows) is 1 ms into the next window.
func wantRateLimit(t *testing.T, w *httptest.ResponseRecorder, name string, win time.Duration, d core.Decision) {
	t.Helper()
	if d.Allowed {
		reset := d.ResetAfter
		if reset > win {
			reset = min(reset-win+time.Millisecond, win)
		}
		wantHeader(t, w, "RateLimit", fmt.Sprintf("%q;r=%d;t=%d", name, d.Remaining, ceilSec(reset)))
		wantHeader(t, w, "Retry-After", "")
		return
	}
	retry := max(1, ceilSec(d.RetryAfter))
	wantHeader(t, w, "RateLimit", fmt.Sprintf("%q;r=0;t=%d", name, retry))
	wantHeader(t, w, "Retry-After", fmt.Sprint(retry))
}

// newLimiterFunc builds a fresh limiter of max per window, wrapped in a
// recorder; each backend's tests supply one.
type newLimiterFunc func(t *testing.T, max int64, window time.Duration) *recorder

func TestDeniedAfterLimitWithExactHeaders(t *testing.T) { checkDeniedAfterLimit(t, newLocal) }

func checkDeniedAfterLimit(t *testing.T, newLimiter newLimiterFunc) {
	rec := newLimiter(t, 3, time.Minute)
	h := newHandler(t, middleware.WithLimit("per-minute", rec),
		middleware.WithClock(core.NewManualClock(epoch)))
	for i := 1; i <= 3; i++ {
		w := get(h, "192.0.2.1:1234")
		wantStatus(t, w, http.StatusOK)
		wantHeader(t, w, "RateLimit-Policy", `"per-minute";q=3;w=60`)
		wantRateLimit(t, w, "per-minute", time.Minute, rec.lastAllow())
	}
	w := get(h, "192.0.2.1:1234")
	wantStatus(t, w, http.StatusTooManyRequests)
	wantHeader(t, w, "RateLimit-Policy", `"per-minute";q=3;w=60`)
	wantRateLimit(t, w, "per-minute", time.Minute, rec.lastAllow())
	// By hand: 30 s into the minute, 3 counted, nothing before: the next
	// unit fits 30.001 s from now, when the window rolls.
	wantHeader(t, w, "RateLimit", `"per-minute";r=0;t=31`)
	wantHeader(t, w, "Retry-After", "31")
	wantStatus(t, get(h, "192.0.2.2:1234"), http.StatusOK) // another identity
}

func TestFirstResponseHeadersByHand(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("per-minute", newLocal(t, 3, time.Minute)),
		middleware.WithClock(core.NewManualClock(epoch)), middleware.WithLegacyHeaders())
	w := get(h, "192.0.2.1:1234")
	// One unit counted 30 s into the window: 2 left. The draft's t is when
	// more quota comes back: 1 ms into the next window the unit starts to
	// fade and r is 3 again, 30.001 s from now, so t=31. (The identity is
	// empty only when the unit has slid out, 90 s from now: a sliding
	// window's full reset takes up to 2w, and t=90 was sent before.)
	wantHeader(t, w, "RateLimit", `"per-minute";r=2;t=31`)
	wantHeader(t, w, "X-RateLimit-Limit", "3")
	wantHeader(t, w, "X-RateLimit-Remaining", "2")
	wantHeader(t, w, "X-RateLimit-Reset", "31")
}

// TestResetNeverPastTheWindow: for every algorithm the RateLimit field's t
// is at most the policy's w; a fixed window's is its end.
func TestResetNeverPastTheWindow(t *testing.T) {
	for _, alg := range core.Algorithms {
		l, err := local.New(core.Limit{Max: 10, Window: 10 * time.Second, Algorithm: alg})
		require.NoError(t, err)
		clk := core.NewManualClock(epoch) // epoch starts a 10-s window
		h := newHandler(t, middleware.WithLimit("l", l), middleware.WithClock(clk))
		for step := 0; step < 20; step++ {
			w := get(h, "192.0.2.1:1")
			var r, reset int64
			_, err := fmt.Sscanf(w.Header().Get("RateLimit"), `"l";r=%d;t=%d`, &r, &reset)
			require.NoError(t, err, "%s: RateLimit %q", alg, w.Header().Get("RateLimit"))
			require.LessOrEqual(t, reset, int64(10), "%s step %d: t=%d past w=10 (%q)", alg, step, reset, w.Header().Get("RateLimit"))
			clk.Advance(700 * time.Millisecond)
		}
	}
	fixed, _ := local.New(core.Limit{Max: 10, Window: 10 * time.Second, Algorithm: core.FixedWindow})
	h := newHandler(t, middleware.WithLimit("l", fixed), middleware.WithClock(core.NewManualClock(epoch.Add(3*time.Second))))
	wantHeader(t, get(h, "192.0.2.1:1"), "RateLimit", `"l";r=9;t=7`)
}

func TestLegacyHeadersOffByDefault(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("l", newLocal(t, 3, time.Minute)))
	w := get(h, "192.0.2.1:1234")
	wantHeader(t, w, "X-RateLimit-Limit", "")
}

func TestMostRestrictiveLimitIsReported(t *testing.T) { checkMostRestrictive(t, newLocal) }

func checkMostRestrictive(t *testing.T, newLimiter newLimiterFunc) {
	sec, day := newLimiter(t, 5, time.Second), newLimiter(t, 3, 24*time.Hour)
	h := newHandler(t, middleware.WithLimit("per-second", sec), middleware.WithLimit("per-day", day),
		middleware.WithClock(core.NewManualClock(epoch)))
	w := get(h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusOK)
	wantHeader(t, w, "RateLimit-Policy", `"per-second";q=5;w=1, "per-day";q=3;w=86400`)
	wantRateLimit(t, w, "per-day", day.Limit().Window, day.lastAllow()) // 2 left against 4
}

func TestDeniedRequestSpendsNothingOnOtherLimits(t *testing.T) { checkDeniedSpendsNothing(t, newLocal) }

func checkDeniedSpendsNothing(t *testing.T, newLimiter newLimiterFunc) {
	clk := core.NewManualClock(epoch)
	big, small := newLimiter(t, 10, time.Minute), newLimiter(t, 2, time.Minute)
	h := newHandler(t, middleware.WithLimit("big", big), middleware.WithLimit("small", small),
		middleware.WithClock(clk))
	for i := 0; i < 5; i++ {
		get(h, "192.0.2.1:1")
	}
	d, err := big.Peek(t.Context(), "192.0.2.1", clk.Now())
	require.NoError(t, err)
	require.Equal(t, int64(8), d.Remaining, "big limit has %d left after 2 allowed and 3 denied requests, want 8", d.Remaining)
	w := get(h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusTooManyRequests)
	wantRateLimit(t, w, "small", small.Limit().Window, small.peek)
}

func TestWithoutPeekDeniedRequestsSpendEarlierLimits(t *testing.T) {
	clk := core.NewManualClock(epoch)
	big, small := newLocal(t, 10, time.Minute), newLocal(t, 2, time.Minute)
	h := newHandler(t, middleware.WithLimit("big", big), middleware.WithLimit("small", small),
		middleware.WithClock(clk), middleware.WithPeekFirst(false))
	for i := 0; i < 5; i++ {
		get(h, "192.0.2.1:1")
	}
	require.Equal(t, 0, big.peeks+small.peeks, "%d peeks with WithPeekFirst(false)", big.peeks+small.peeks)
	d, _ := big.Peek(t.Context(), "192.0.2.1", clk.Now())
	require.Equal(t, int64(5), d.Remaining, "big limit has %d left, want 5 (every request spent one)", d.Remaining)
}

func TestBadKeyIs400ByDefault(t *testing.T) {
	rec := newLocal(t, 3, time.Minute)
	h := newHandler(t, middleware.WithLimit("l", rec), middleware.WithKeyFunc(middleware.HeaderKey("X-API-Key")))
	w := get(h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusBadRequest)
	wantHeader(t, w, "RateLimit-Policy", `"l";q=3;w=60`)
	long := string(make([]byte, core.MaxKeyLen+1))
	wantStatus(t, get(h, "192.0.2.1:1", "X-API-Key", "a"+long), http.StatusBadRequest)
	require.Equal(t, 0, rec.allows, "%d limiter calls for bad keys", rec.allows)
	wantStatus(t, get(h, "192.0.2.1:1", "X-API-Key", "k1"), http.StatusOK)
}

// TestBadKeyMessagesDiffer: the default 400 says whether the key was
// missing or too long.
func TestBadKeyMessagesDiffer(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("l", newLocal(t, 3, time.Minute)),
		middleware.WithKeyFunc(middleware.HeaderKey("X-API-Key")))
	missing := get(h, "192.0.2.1:1")
	long := get(h, "192.0.2.1:1", "X-API-Key", strings.Repeat("k", core.MaxKeyLen+1))
	wantStatus(t, missing, http.StatusBadRequest)
	wantStatus(t, long, http.StatusBadRequest)
	require.Contains(t, missing.Body.String(), "no rate-limit key", "bodies %q and %q", missing.Body.String(), long.Body.String())
	require.Contains(t, long.Body.String(), "longer than 512", "bodies %q and %q", missing.Body.String(), long.Body.String())
}

// TestCustomBadKeyHandler: an API answers 401 to a missing key and 431 to
// an over-long one, told apart with errors.Is; nothing is counted.
func TestCustomBadKeyHandler(t *testing.T) {
	rec := newLocal(t, 3, time.Minute)
	h := newHandler(t, middleware.WithLimit("l", rec), middleware.WithKeyFunc(middleware.HeaderKey("X-API-Key")),
		middleware.WithBadKeyHandler(func(w http.ResponseWriter, _ *http.Request, err error) {
			switch {
			case errors.Is(err, core.ErrEmptyKey):
				http.Error(w, "API key required", http.StatusUnauthorized)
			case errors.Is(err, core.ErrKeyTooLong):
				http.Error(w, "API key too long", http.StatusRequestHeaderFieldsTooLarge)
			default:
				assert.Fail(t, fmt.Sprintf("bad-key handler got %v", err))
			}
		}))
	w := get(h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusUnauthorized)
	wantHeader(t, w, "RateLimit-Policy", `"l";q=3;w=60`)
	wantStatus(t, get(h, "192.0.2.1:1", "X-API-Key", strings.Repeat("k", core.MaxKeyLen+1)),
		http.StatusRequestHeaderFieldsTooLarge)
	require.Equal(t, 0, rec.allows, "%d limiter calls for bad keys", rec.allows)
	wantStatus(t, get(h, "192.0.2.1:1", "X-API-Key", "k1"), http.StatusOK)
}

func TestBadKeyUsesFallbackKey(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("l", newLocal(t, 2, time.Minute)),
		middleware.WithKeyFunc(middleware.HeaderKey("X-API-Key")), middleware.WithFallbackKey("anonymous"))
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusOK)
	wantStatus(t, get(h, "192.0.2.2:1"), http.StatusOK)
	wantStatus(t, get(h, "192.0.2.3:1"), http.StatusTooManyRequests) // shared quota
	wantStatus(t, get(h, "192.0.2.3:1", "X-API-Key", "k1"), http.StatusOK)
}

func TestCustomDeniedHandler(t *testing.T) {
	h := newHandler(t, middleware.WithLimit("l", newLocal(t, 1, time.Minute)),
		middleware.WithDeniedHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte("slow down"))
		})))
	get(h, "192.0.2.1:1")
	w := get(h, "192.0.2.1:1")
	wantStatus(t, w, http.StatusTooManyRequests)
	require.Equal(t, "slow down", w.Body.String(), "body %q, Retry-After %q", w.Body.String(), w.Header().Get("Retry-After"))
	require.NotEqual(t, "", w.Header().Get("Retry-After"), "body %q, Retry-After %q", w.Body.String(), w.Header().Get("Retry-After"))
}

func TestNewRefusesBadOptions(t *testing.T) {
	l := newLocal(t, 1, time.Second)
	cases := map[string][]middleware.Option{
		"no limit":       nil,
		"empty name":     {middleware.WithLimit("", l)},
		"name not ASCII": {middleware.WithLimit("débit", l)},
		"name twice":     {middleware.WithLimit("a", l), middleware.WithLimit("a", l)},
		"nil limiter":    {middleware.WithLimit("a", nil)},
		"nil key func":   {middleware.WithLimit("a", l), middleware.WithKeyFunc(nil)},
		"bad fallback":   {middleware.WithLimit("a", l), middleware.WithFallbackKey("")},
		"bad fail mode":  {middleware.WithLimit("a", l), middleware.WithFailMode(7)},
		"neg timeout":    {middleware.WithLimit("a", l), middleware.WithTimeout(-1)},
		"nil clock":      {middleware.WithLimit("a", l), middleware.WithClock(nil)},
		"nil denied":     {middleware.WithLimit("a", l), middleware.WithDeniedHandler(nil)},
		"nil bad key":    {middleware.WithLimit("a", l), middleware.WithBadKeyHandler(nil)},
	}
	for name, opts := range cases {
		_, err := middleware.New(opts...)
		assert.ErrorIs(t, err, core.ErrInvalid, "%s: err = %v, want core.ErrInvalid", name, err)
	}
}

func TestPolicyFieldEscapesAndSubSecondWindows(t *testing.T) {
	h := newHandler(t, middleware.WithLimit(`a"b\c`, newLocal(t, 5, 1500*time.Millisecond)))
	wantHeader(t, get(h, "192.0.2.1:1"), "RateLimit-Policy", `"a\"b\\c";q=5`)
}
