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
		if err != nil {
			t.Fatalf("redis.New: %v", err)
		}
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
// then gets the configured fail mode within the middleware's timeout.
func TestRedisKilled(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, c := range []struct {
		mode middleware.FailMode
		want int
	}{{middleware.FailOpen, http.StatusOK}, {middleware.FailClosed, http.StatusServiceUnavailable},
		{middleware.FailAsLimiter, http.StatusServiceUnavailable}} { // the Redis limiter fails closed
		t.Run(c.mode.String(), func(t *testing.T) {
			rdb, proc := redistest.Client(t)
			l, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			var errs atomic.Int32
			h := newHandler(t, middleware.WithLimit("l", l), middleware.WithFailMode(c.mode),
				middleware.WithTimeout(timeout),
				middleware.WithErrorHandler(func(*http.Request, error) { errs.Add(1) }))
			wantStatus(t, get(h, "192.0.2.1:1"), http.StatusOK)
			if err := proc.Kill(); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				start := time.Now()
				w := get(h, "192.0.2.1:1")
				took := time.Since(start)
				wantStatus(t, w, c.want)
				wantHeader(t, w, "RateLimit", "")
				if took > timeout+150*time.Millisecond {
					t.Fatalf("request %d answered after %s, timeout %s", i, took, timeout)
				}
			}
			if errs.Load() != 3 {
				t.Fatalf("error handler called %d times, want 3", errs.Load())
			}
		})
	}
}

// TestRedisThatNeverAnswers: a server that accepts connections and never
// replies (a hung Redis) cannot hold a request past the timeout, even
// though the backend's own timeout is longer.
func TestRedisThatNeverAnswers(t *testing.T) {
	addr := blackHole(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	l, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute), redisbackend.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 100 * time.Millisecond
	h := newHandler(t, middleware.WithLimit("l", l), middleware.WithTimeout(timeout),
		middleware.WithFailMode(middleware.FailClosed))
	start := time.Now()
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusServiceUnavailable)
	if took := time.Since(start); took > timeout+150*time.Millisecond {
		t.Fatalf("answered after %s, timeout %s", took, timeout)
	}
}

// blackHole listens on loopback, accepts connections, reads and never
// writes. It closes everything in t.Cleanup.
func blackHole(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
	rdb := redis.NewClient(&redis.Options{Addr: blackHole(t), MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	l, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute), redisbackend.WithTimeout(5*time.Second),
		redisbackend.WithFailOpen())
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 100 * time.Millisecond
	h := newHandler(t, middleware.WithLimit("l", l), middleware.WithTimeout(timeout),
		middleware.WithTrustedDeadline())
	start := time.Now()
	wantStatus(t, get(h, "192.0.2.1:1"), http.StatusOK) // fail-open
	if took := time.Since(start); took > timeout+150*time.Millisecond {
		t.Fatalf("answered after %s, timeout %s", took, timeout)
	}
}
