package middleware_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// onRedis returns a newLimiterFunc building Redis-backed limiters on one
// private redis-server; each limiter gets its own key prefix, since two
// limits must not share counters.
func onRedis(t *testing.T) newLimiterFunc {
	rdb, _ := redistest.Client(t)
	var n atomic.Int32
	return func(t *testing.T, max int64, window time.Duration) *recorder {
		t.Helper()
		prefix := fmt.Sprintf("mw%d", n.Add(1))
		l, err := redisbackend.New(rdb, core.PerWindow(max, window), redisbackend.WithPrefix(prefix))
		require.NoError(t, err, "redis.New")
		return &recorder{Limiter: l}
	}
}

func TestRedisDeniedAfterLimitWithExactHeaders(t *testing.T) {
	checkDeniedAfterLimit(t, onRedis(t))
}

func TestRedisDeniedRequestSpendsNothingOnOtherLimits(t *testing.T) {
	checkDeniedSpendsNothing(t, onRedis(t))
}

func TestRedisMostRestrictiveLimitIsReported(t *testing.T) {
	checkMostRestrictive(t, onRedis(t))
}

func TestRedisSpoofedForwardedFor(t *testing.T) {
	checkSpoofedForwardedFor(t, onRedis(t))
}

// TestRedisKilled: the real redis-server is killed mid-run; every request
// then gets an answer, the configured fail mode (the backend's own timeout
// is an hour, so only a refusal or the middleware's timeout can end a
// call; neither is timed, see getAnswered).
func TestRedisKilled(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, c := range []struct {
		mode middleware.FailMode
		want int
	}{{middleware.FailOpen, http.StatusOK}, {middleware.FailClosed, http.StatusServiceUnavailable},
		{middleware.FailAsLimiter, http.StatusServiceUnavailable}} { // the Redis limiter fails closed
		t.Run(c.mode.String(), func(t *testing.T) {
			rdb, proc := redistest.Client(t)
			l, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute), redisbackend.WithTimeout(time.Hour))
			require.NoError(t, err)
			var errs atomic.Int32
			h := newHandler(t, middleware.WithLimit("l", l), middleware.WithFailMode(c.mode),
				middleware.WithTimeout(timeout),
				middleware.WithErrorHandler(func(*http.Request, error) { errs.Add(1) }))
			wantStatus(t, get(h, "192.0.2.1:1"), http.StatusOK)
			err = proc.Kill()
			require.NoError(t, err)
			for i := 0; i < 3; i++ {
				w := getAnswered(t, h, "192.0.2.1:1")
				wantStatus(t, w, c.want)
				wantHeader(t, w, "RateLimit", "")
			}
			require.Equal(t, int32(3), errs.Load(), "error handler called %d times, want 3", errs.Load())
		})
	}
}

// TestRedisThatNeverAnswers: a server that accepts connections and never
// replies (a hung Redis) cannot hold a request past the timeout, even
// though the backend's own timeout is an hour and the client has no read
// timeout: without the middleware's deadline the request would never be
// answered (see getAnswered).
func TestRedisThatNeverAnswers(t *testing.T) {
	addr := blackHole(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ReadTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	l, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute), redisbackend.WithTimeout(time.Hour))
	require.NoError(t, err)
	const timeout = 100 * time.Millisecond
	h := newHandler(t, middleware.WithLimit("l", l), middleware.WithTimeout(timeout),
		middleware.WithFailMode(middleware.FailClosed))
	wantStatus(t, getAnswered(t, h, "192.0.2.1:1"), http.StatusServiceUnavailable)
}

// blackHole listens on loopback, accepts connections, reads and never
// writes. It closes everything in t.Cleanup.
func blackHole(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return ln.Addr().String()
}

// TestRedisThatNeverAnswersTrustedDeadline: with WithTrustedDeadline the
// bound holds when the go-redis client honours context deadlines, and the
// limiter's own fail-open decision stands.
func TestRedisThatNeverAnswersTrustedDeadline(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: blackHole(t), MaxRetries: -1, ContextTimeoutEnabled: true, ReadTimeout: -1})
	t.Cleanup(func() { rdb.Close() })
	l, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute), redisbackend.WithTimeout(time.Hour),
		redisbackend.WithFailOpen())
	require.NoError(t, err)
	const timeout = 100 * time.Millisecond
	h := newHandler(t, middleware.WithLimit("l", l), middleware.WithTimeout(timeout),
		middleware.WithTrustedDeadline())
	wantStatus(t, getAnswered(t, h, "192.0.2.1:1"), http.StatusOK) // fail-open
}
