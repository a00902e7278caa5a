package main

import (
	"net/http"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/require"
)

// TestServerDecidesWhenRedisHangs: on a Redis that accepts connections but
// answers nothing (SIGSTOP), a request still gets the Redis limiter's own
// fail-closed decision, 503 with its Retry-After, within the middleware's
// deadline (twice the limiter's WithTimeout), not the middleware's 503 for
// a decision it gave up on (no Retry-After). It catches a client built
// without ContextTimeoutEnabled, whose call outlasts the limiter's timeout
// and the deadline by waiting out go-redis' 5 s ReadTimeout.
func TestServerDecidesWhenRedisHangs(t *testing.T) {
	redis := redistest.Start(t)
	url := startServer(t, options{redisAddr: redis.Addr, max: 3, window: time.Hour, timeout: 2 * redisbackend.DefaultTimeout})
	resp := fetch(t, url) // a connection in the pool, the script loaded
	require.Equal(t, http.StatusOK, resp.StatusCode, "with Redis up")
	require.NoError(t, redis.Pause())
	t.Cleanup(func() { _ = redis.Resume() })
	resp = fetch(t, url)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "with Redis hanging")
	require.Equal(t, "1", resp.Header.Get("Retry-After"), "the limiter's fail-closed decision (redis.FailClosedRetry) reached the middleware")
}
