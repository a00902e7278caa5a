package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// startServer runs the example (with its own private redis-server) until
// the test ends and returns its URL.
func startServer(t *testing.T, o options) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	var out strings.Builder
	o.addr, o.out = "127.0.0.1:0", &out
	go func() { done <- run(ctx, o, ready) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run returned %v", err)
		}
	})
	select {
	case url := <-ready:
		if !strings.Contains(out.String(), url) {
			t.Errorf("printed %q, which lacks the URL %s", out.String(), url)
		}
		return url
	case err := <-done:
		t.Fatalf("the example server did not start (it needs redis-server on PATH): %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the example server did not start within 20s")
	}
	return ""
}

func fetch(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestServerAnswersWithHeadersThen429(t *testing.T) {
	url := startServer(t, options{max: 3, window: time.Hour})
	const policy = `"short";q=3;w=3600, "daily";q=1000;w=86400`
	for i := 1; i <= 3; i++ {
		resp := fetch(t, url)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		if got := resp.Header.Get("RateLimit-Policy"); got != policy {
			t.Fatalf("RateLimit-Policy = %q, want %q", got, policy)
		}
		wantPrefix := fmt.Sprintf(`"short";r=%d;t=`, 3-i)
		if got := resp.Header.Get("RateLimit"); !strings.HasPrefix(got, wantPrefix) {
			t.Fatalf("request %d: RateLimit = %q, want %s...", i, got, wantPrefix)
		}
		if got := resp.Header.Get("X-RateLimit-Remaining"); got != fmt.Sprint(3-i) {
			t.Fatalf("request %d: X-RateLimit-Remaining = %q", i, got)
		}
	}
	resp := fetch(t, url)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("4th request: status %d, want 429", resp.StatusCode)
	}
	retry := resp.Header.Get("Retry-After")
	if retry == "" || retry == "0" {
		t.Fatalf("429 without a useful Retry-After: %q", retry)
	}
	if got, want := resp.Header.Get("RateLimit"), `"short";r=0;t=`+retry; got != want {
		t.Fatalf("RateLimit = %q, want %q", got, want)
	}
}

func TestServerExportsMetrics(t *testing.T) {
	url := startServer(t, options{max: 1, window: time.Hour})
	fetch(t, url)
	fetch(t, url)
	resp, err := http.Get(url + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`edgelimit_decisions_total{limiter="short",result="allowed",source="redis"} 1`,
		`edgelimit_decisions_total{limiter="short",result="denied",source="redis"} 1`,
		`edgelimit_redis_roundtrips_total{client="main",kind="command"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
