package middleware_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFailOpenStillEnforcesHealthyLimits: under FailOpen, a limit whose
// Redis is down (killed; the Redis limiter fails closed) is overridden, but
// a limit beside it whose store is up still decides and counts. Three
// requests of one identity at 1 per minute on the healthy local limit give
// 200, 429, 429, in either order of the limits, with or without the peeks.
// It catches a blind denial (peek or AllowN) ending the decision before the
// healthy limit is asked: every request served, none counted.
func TestFailOpenStillEnforcesHealthyLimits(t *testing.T) {
	rdb := deadRedis(t)
	for _, c := range []struct {
		redisFirst, peek bool
	}{{false, true}, {false, false}, {true, true}, {true, false}} {
		t.Run(fmt.Sprintf("redis first %v, peek %v", c.redisFirst, c.peek), func(t *testing.T) {
			down, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute))
			require.NoError(t, err)
			healthy := newLocal(t, 1, time.Minute)
			limits := []middleware.Option{middleware.WithLimit("healthy", healthy), middleware.WithLimit("down", down)}
			if c.redisFirst {
				limits[0], limits[1] = limits[1], limits[0]
			}
			h := newHandler(t, append(limits, middleware.WithFailMode(middleware.FailOpen),
				middleware.WithPeekFirst(c.peek), middleware.WithClock(core.NewManualClock(epoch)))...)
			var got [3]int
			for i := range got {
				w := get(h, "192.0.2.1:1")
				got[i] = w.Code
				if w.Code == http.StatusTooManyRequests {
					assert.Equal(t, `"healthy";r=0;t=31`, w.Header().Get("RateLimit"), "request %d", i)
				}
			}
			require.Equal(t, [3]int{http.StatusOK, http.StatusTooManyRequests, http.StatusTooManyRequests}, got,
				"statuses %v: the healthy limit of 1 per minute was not enforced", got)
		})
	}
}
