package middleware_test

import (
	"context"
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

// TestBlindDenialHidesNoCountedOne: under FailAsLimiter (the default), a
// limit whose store is up and one whose Redis is down (killed; the Redis
// limiter fails closed), in either order, with the peeks and without. An
// identity that has spent the healthy limit (1 per minute) is over a limit
// counted from real state: 429 with that limit's RateLimit field and
// Retry-After, never 503. An identity with quota left meets the down
// store's fail-closed denial, which stands: 503 with its Retry-After, and
// nothing is spent on the healthy limit unless it comes first with the
// peeks off (AllowN in order). It catches a blind denial (a peek at the
// down limit, or its AllowN) ending the decision before the healthy limit
// is consulted: 503 for an identity over it, with the peeks where the
// healthy limit comes first (the peeks skip the first limit), without
// them where it comes second.
func TestBlindDenialHidesNoCountedOne(t *testing.T) {
	rdb := deadRedis(t)
	for _, c := range []struct{ downFirst, peek bool }{{false, true}, {false, false}, {true, true}, {true, false}} {
		t.Run(fmt.Sprintf("down first %v, peek %v", c.downFirst, c.peek), func(t *testing.T) {
			down, err := redisbackend.New(rdb, core.PerWindow(100, time.Minute))
			require.NoError(t, err)
			healthy := newLocal(t, 1, time.Minute)
			limits := []middleware.Option{middleware.WithLimit("healthy", healthy), middleware.WithLimit("down", down)}
			if c.downFirst {
				limits[0], limits[1] = limits[1], limits[0]
			}
			h := newHandler(t, append(limits, middleware.WithPeekFirst(c.peek),
				middleware.WithClock(core.NewManualClock(epoch)))...)
			d, err := healthy.AllowN(context.Background(), "192.0.2.1", epoch, 1)
			require.NoError(t, err)
			require.True(t, d.Allowed, "the first limit's one unit")

			w := get(h, "192.0.2.1:1")
			assert.Equal(t, http.StatusTooManyRequests, w.Code, "an identity over the healthy limit")
			assert.Equal(t, `"healthy";r=0;t=31`, w.Header().Get("RateLimit"))
			assert.Equal(t, "31", w.Header().Get("Retry-After"))

			w = get(h, "192.0.2.2:1")
			assert.Equal(t, http.StatusServiceUnavailable, w.Code, "an identity under the healthy limit, the other limit's store down")
			assert.Equal(t, "1", w.Header().Get("Retry-After"), "the fail-closed denial's")
			assert.Empty(t, w.Header().Get("RateLimit"))
			if c.peek || c.downFirst {
				d, err := healthy.Peek(context.Background(), "192.0.2.2", epoch)
				require.NoError(t, err)
				assert.Equal(t, int64(1), d.Remaining, "nothing spent on the healthy limit")
			}
		})
	}
}
