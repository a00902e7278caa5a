package redis

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPipeliningSharesRoundTrips: 64 goroutines on one key get exactly the
// limit admitted, in fewer round trips than decisions.
func TestPipeliningSharesRoundTrips(t *testing.T) {
	c, _ := redistest.Client(t)
	for _, lim := range everyLimit(core.PerWindow(500, time.Minute)) {
		l := newLimiter(t, c, lim, WithPipelining(200*time.Microsecond, 64), WithTimeout(hammerTimeout))
		got := hammer(t, l, "shared", 64, 20)
		s := l.Stats()
		t.Logf("%s: %d decisions in %d round trips", lim, s.Calls, s.RoundTrips)
		assert.Equal(t, int64(500), got, "%s: admitted %d of 1280, want exactly 500", lim, got)
		if assert.Equal(t, uint64(1280), s.Calls, "%s: %d round trips for %d decisions, want fewer", lim, s.RoundTrips, s.Calls) {
			assert.Less(t, s.RoundTrips, s.Calls, "%s: %d round trips for %d decisions, want fewer", lim, s.RoundTrips, s.Calls)
		}
	}
}

// TestPipeliningKeepsEachAnswer: 64 goroutines, each on its own key with its
// own weights, share pipelines; every answer must be the one core's Go math
// gives for that caller's own history.
// It runs with a client that honours context deadlines too, where a call
// finding the batcher idle runs in its caller's goroutine (batcher.lone)
// while the others queue behind it.
func TestPipeliningKeepsEachAnswer(t *testing.T) {
	c, _ := redistest.Client(t)
	for _, ctxTimeouts := range []bool{false, true} {
		big := goredis.NewClient(&goredis.Options{Addr: c.Options().Addr, PoolSize: 8, ContextTimeoutEnabled: ctxTimeouts})
		t.Cleanup(func() { big.Close() })
		keepsEachAnswer(t, big)
	}
}

func keepsEachAnswer(t *testing.T, big *goredis.Client) {
	for _, lim := range everyLimit(core.PerWindow(20, time.Minute)) {
		l := newLimiter(t, big, lim, WithPipelining(100*time.Microsecond, 16), WithExpirySlack(time.Hour))
		got, want := l.batch.lone != nil, big.Options().ContextTimeoutEnabled
		require.Equal(t, want, got, "lone calls run in the caller's goroutine: %v; client honours context deadlines: %v", got, want)
		big.FlushDB(context.Background())
		var wg sync.WaitGroup
		for g := 0; g < 64; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				callerHistory(t, l, g)
			}()
		}
		wg.Wait()
		s := l.Stats()
		assert.Less(t, s.RoundTrips, s.Calls, "%s: %d round trips for %d decisions", lim, s.RoundTrips, s.Calls)
	}
}

// callerHistory plays caller g's own sequence and checks every answer.
func callerHistory(t *testing.T, l *Limiter, g int) {
	m := &model{limit: l.Limit()}
	key := fmt.Sprintf("caller-%d", g)
	now := windowZero + int64(g)
	for i := 0; i < 30; i++ {
		now += int64((g * i) % 700)
		n := int64(1 + (g+i)%4)
		want := m.decide(now, n, true)
		got, err := l.AllowN(context.Background(), key, at(now), n)
		if !assert.NoError(t, err) {
			return
		}
		if !assert.True(t, sameDecision(got, want), "caller %d step %d: got %+v, want %+v", g, i, got, want) {
			return
		}
	}
}

// TestPipeliningLoneCallerNotDelayed: a call made while no pipeline is in
// flight goes out at once, never waiting for the window: with a one-hour
// window, sequential calls still answer, each in its own round trip (plus
// one EVAL when the server did not hold the script yet).
func TestPipeliningLoneCallerNotDelayed(t *testing.T) {
	c, _ := redistest.Client(t)
	l := newLimiter(t, c, core.PerWindow(5, time.Minute), WithPipelining(time.Hour, 64))
	for i := 0; i < 8; i++ {
		// 30 s: far under the hour-long window a lone call must not wait
		// for, far over a round trip on a loaded machine.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		d, err := l.Allow(ctx, "lone")
		cancel()
		require.NoError(t, err, "call %d: %v (a lone call waited for the window)", i, err)
		want := i < 5
		require.Equal(t, want, d.Allowed, "call %d: allowed %v, want %v", i, d.Allowed, want)
	}
	s := l.Stats()
	assert.Equal(t, uint64(8), s.Calls, "%d calls in %d round trips, want 8 in 8 or 9", s.Calls, s.RoundTrips)
	assert.GreaterOrEqual(t, s.RoundTrips, uint64(8), "%d calls in %d round trips, want 8 in 8 or 9", s.Calls, s.RoundTrips)
	assert.LessOrEqual(t, s.RoundTrips, uint64(9), "%d calls in %d round trips, want 8 in 8 or 9", s.Calls, s.RoundTrips)
}
