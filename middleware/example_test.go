package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
)

// A route limited to 2 requests a minute per client IP, and 1000 a day.
func Example() {
	perMinute, _ := local.New(core.PerWindow(2, time.Minute))
	perDay, _ := local.New(core.PerWindow(1000, 24*time.Hour))
	mw, err := middleware.New(
		middleware.WithLimit("per-minute", perMinute),
		middleware.WithLimit("per-day", perDay),
		middleware.WithClock(core.NewManualClock(time.Unix(1_700_000_010, 0))), // for a stable output
	)
	if err != nil {
		panic(err)
	}
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	for i := 0; i < 3; i++ {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "198.51.100.7:50000"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if i == 0 {
			fmt.Println("RateLimit-Policy:", w.Header().Get("RateLimit-Policy"))
		}
		fmt.Printf("%d RateLimit: %s Retry-After: %q\n", w.Code, w.Header().Get("RateLimit"), w.Header().Get("Retry-After"))
	}
	// Output:
	// RateLimit-Policy: "per-minute";q=2;w=60, "per-day";q=1000;w=86400
	// 200 RateLimit: "per-minute";r=1;t=31 Retry-After: ""
	// 200 RateLimit: "per-minute";r=0;t=31 Retry-After: ""
	// 429 RateLimit: "per-minute";r=0;t=31 Retry-After: "31"
}

// Behind a load balancer at 10.0.0.0/8 that appends to X-Forwarded-For,
// clients are told apart by their own address; a client that reaches the
// server directly cannot pick its key by sending the header itself.
func ExampleTrustedClientIP() {
	key, err := middleware.TrustedClientIP(middleware.XForwardedFor, "10.0.0.0/8")
	if err != nil {
		panic(err)
	}
	viaProxy := httptest.NewRequest(http.MethodGet, "/", nil)
	viaProxy.RemoteAddr = "10.0.0.5:40000"
	viaProxy.Header.Set("X-Forwarded-For", "6.6.6.6, 203.0.113.9") // 6.6.6.6 was sent by the client
	direct := httptest.NewRequest(http.MethodGet, "/", nil)
	direct.RemoteAddr = "203.0.113.50:40000"
	direct.Header.Set("X-Forwarded-For", "6.6.6.6")
	fmt.Println(key(viaProxy))
	fmt.Println(key(direct))
	// Output:
	// 203.0.113.9
	// 203.0.113.50
}

// Keyed by API key, with the requests that carry none sharing one quota,
// and answering 503 when the store is down.
func ExampleWithFallbackKey() {
	l, _ := local.New(core.PerWindow(100, time.Second))
	mw, err := middleware.New(
		middleware.WithLimit("per-second", l),
		middleware.WithKeyFunc(middleware.HeaderKey("X-API-Key")),
		middleware.WithFallbackKey("anonymous"),
		middleware.WithFailMode(middleware.FailClosed),
		middleware.WithTimeout(50*time.Millisecond),
		middleware.WithLegacyHeaders(),
	)
	if err != nil {
		panic(err)
	}
	w := httptest.NewRecorder()
	mw.Wrap(http.NotFoundHandler()).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	fmt.Println(w.Code, w.Header().Get("X-RateLimit-Remaining"))
	// Output:
	// 404 99
}
