package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hang bounds the middleware's decision deadline in these tests: what only
// a hang reaches, since a loaded machine can take longer than the 100 ms
// default to reach Redis, and a 503 then is not what the tests check.
const hang = 30 * time.Second

// startServer runs the example (with its own private redis-server) until
// the test ends and returns its URL.
func startServer(t *testing.T, o options) string {
	t.Helper()
	if o.timeout == 0 {
		o.timeout = hang
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out strings.Builder
	o.addr, o.out = "127.0.0.1:0", &out
	go func() { done <- run(ctx, o, ready) }()
	t.Cleanup(func() {
		cancel()
		err := <-done
		assert.NoError(t, err, "run returned %v", err)
	})
	select {
	case url := <-ready:
		assert.Contains(t, out.String(), url, "printed %q, which lacks the URL %s", out.String(), url)
		return url
	case err := <-done:
		require.FailNow(t, fmt.Sprintf("the example server did not start (it needs redis-server on PATH): %v", err))
	case <-time.After(60 * time.Second): // a hang bound only: ready or done ends the wait
		require.FailNow(t, "the example server did not start within 60s")
	}
	return ""
}

func fetch(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err, "GET %s", url)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestServerAnswersWithHeadersThen429(t *testing.T) {
	url := startServer(t, options{max: 3, window: time.Hour})
	const policy = `"short";q=3;w=3600, "daily";q=1000;w=86400`
	for i := 1; i <= 3; i++ {
		resp := fetch(t, url)
		require.Equal(t, int(http.StatusOK), resp.StatusCode, "request %d: status %d", i, resp.StatusCode)
		got := resp.Header.Get("RateLimit-Policy")
		require.Equal(t, string(policy), got, "RateLimit-Policy = %q, want %q", got, policy)
		wantPrefix := fmt.Sprintf(`"short";r=%d;t=`, 3-i)
		got = resp.Header.Get("RateLimit")
		require.True(t, strings.HasPrefix(got, wantPrefix), "request %d: RateLimit = %q, want %s...", i, got, wantPrefix)
		got = resp.Header.Get("X-RateLimit-Remaining")
		require.Equal(t, fmt.Sprint(3-i), got, "request %d: X-RateLimit-Remaining = %q", i, got)
	}
	resp := fetch(t, url)
	require.Equal(t, int(http.StatusTooManyRequests), resp.StatusCode, "4th request: status %d, want 429", resp.StatusCode)
	retry := resp.Header.Get("Retry-After")
	require.NotEqual(t, "", retry, "429 without a useful Retry-After: %q", retry)
	require.NotEqual(t, "0", retry, "429 without a useful Retry-After: %q", retry)
	got, want := resp.Header.Get("RateLimit"), `"short";r=0;t=`+retry
	require.Equal(t, want, got, "RateLimit = %q, want %q", got, want)
}

func TestServerExportsMetrics(t *testing.T) {
	url := startServer(t, options{max: 1, window: time.Hour})
	fetch(t, url)
	fetch(t, url)
	resp, err := http.Get(url + "metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`edgelimit_decisions_total{limiter="short",result="allowed",source="redis"} 1`,
		`edgelimit_decisions_total{limiter="short",result="denied",source="redis"} 1`,
		`edgelimit_redis_roundtrips_total{client="main",kind="command"}`,
	} {
		assert.Contains(t, string(body), want, "/metrics lacks %s", want)
	}
}
