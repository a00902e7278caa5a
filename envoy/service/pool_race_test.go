package service

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/backends/local"
	"github.com/edgelimit/edgelimit/core"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// guarded is a local limiter that notes a call begun or ended after its
// Close, and a Close while a request holds it (inUse).
type guarded struct {
	core.Limiter
	closed    atomic.Bool
	inUse     atomic.Int64
	misuses   *atomic.Int64
	decisions *atomic.Int64
}

func (g *guarded) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	if g.closed.Load() {
		g.misuses.Add(1)
	}
	d, err := g.Limiter.AllowN(ctx, key, now, n)
	if g.closed.Load() {
		g.misuses.Add(1)
	}
	g.decisions.Add(1)
	return d, err
}

// TestPoolNoUseAfterClose: 8 goroutines acquire, use and let go of the
// limiters of 5 limits while the pool, bounded to 1 and with the clock
// moving past Idle, releases and closes them; no limiter is used after
// (or while) it is closed, and limiters are released meanwhile. Run with
// -race. It catches a release that does not wait for the requests using a
// limiter (a close under a request: seen in every run of 3 with that
// mutation), and, by the race detector, unsynchronised pool state;
// TestPoolIdleSparesLimitersInUse and TestPoolReleasedEntryRefused catch
// the release mistakes deterministically.
func TestPoolNoUseAfterClose(t *testing.T) {
	clk := core.NewManualClock(poolT0)
	var misuses, decisions atomic.Int64
	p := &pool{clock: clk, opts: PoolOptions{Idle: time.Minute, Max: 1},
		build: func(l core.Limit) (core.Limiter, error) {
			lim, err := local.New(l, local.WithClock(clk))
			return &guarded{Limiter: lim, misuses: &misuses, decisions: &decisions}, err
		},
		close: func(_ context.Context, l core.Limiter) error {
			g := l.(*guarded)
			g.closed.Store(true)
			if g.inUse.Load() > 0 {
				misuses.Add(1)
			}
			return nil
		}}
	const workers, rounds, limits, maxPhases = 8, 200, 5, 10
	phase := func() {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := range rounds {
					if w == 0 && i%10 == 0 {
						clk.Advance(time.Minute) // every limiter not used since is idle
					}
					lim, done, err := p.get(perMinute(int64(1 + (w+i)%limits)))
					if !assert.NoError(t, err) {
						return
					}
					g := lim.(*guarded)
					g.inUse.Add(1)
					runtime.Gosched() // let releases and closes run while held
					_, err = lim.AllowN(context.Background(), "k", clk.Now(), 1)
					g.inUse.Add(-1)
					done()
					assert.NoError(t, err)
				}
			})
		}
		wg.Wait()
		settle(p)
	}
	// Whether a limiter is released while others are in use depends on
	// how the goroutines interleave (on a loaded machine every limiter can
	// stay held through a phase): phases run until one released some, at
	// most maxPhases.
	phases := 0
	for phases < maxPhases && p.stats().Released == 0 {
		phase()
		phases++
	}
	assert.Zero(t, misuses.Load(), "calls on a closed limiter")
	assert.Equal(t, int64(phases*workers*rounds), decisions.Load())
	assert.Positive(t, p.stats().Released, "limiters released meanwhile, in %d phases", phases)
	require.NoError(t, p.closeAll(context.Background()))
}

// TestRedisDecisionsAcrossReleases: 8 goroutines send requests of 4
// limit overrides (20 in 1, 2, 3 and 4 hours, 60 requests each) to a
// redis backend bounded to 1 limiter outside the configuration, so
// limiters are released and built again while requests come; every
// request is answered, and exactly 20 of each override pass, the counts
// being at Redis by limit. It catches a limiter of a limit built afresh
// that does not count where the released one did, and (when a request
// meets a release: one run in 3 with that mutation) a request failed
// rather than given a fresh limiter.
func TestRedisDecisionsAcrossReleases(t *testing.T) {
	rdb := harnessClient(t, 5*time.Second)
	clk := core.NewManualClock(poolT0)
	b := NewRedis(rdb, RedisOptions{Clock: clk, Timeout: 5 * time.Second, Pool: PoolOptions{Idle: time.Minute, Max: 1}})
	t.Cleanup(func() { b.Close(context.Background()) })
	testDecisionsAcrossReleases(t, b, clk, func(admitted int64) {
		assert.Equal(t, int64(20), admitted)
	})
}

// TestBudgetDecisionsAcrossReleases is TestRedisDecisionsAcrossReleases
// on the budget backend (one PoP), whose released limiters are closed
// with a last Sync: every request is answered (none by a closed limiter,
// which would refuse it), and at most 20 of each override pass.
func TestBudgetDecisionsAcrossReleases(t *testing.T) {
	rdb := harnessClient(t, 5*time.Second)
	clk := core.NewManualClock(poolT0)
	b := NewBudget(BudgetOptions{PoP: "a", Redis: rdb, PoPs: 1, Clock: clk, Sync: time.Hour, Pool: PoolOptions{Idle: time.Minute, Max: 1}})
	t.Cleanup(func() { b.Close(context.Background()) })
	testDecisionsAcrossReleases(t, b, clk, func(admitted int64) {
		assert.LessOrEqual(t, admitted, int64(20))
		assert.Positive(t, admitted)
	})
}

// testDecisionsAcrossReleases sends the requests of
// TestRedisDecisionsAcrossReleases to b and checks each override's
// admissions with check. A limiter is released only when no request holds
// it, and 8 workers on 4 limits may hold every one at each chance (seen
// under load): the load is sent again, in the same hour, until the pool
// has released some (at most 5 rounds), so the releases the test is
// about happened.
func testDecisionsAcrossReleases(t *testing.T, b Backend, clk *core.ManualClock, check func(admitted int64)) {
	s, err := New(Options{Backend: b, Clock: clk})
	require.NoError(t, err)
	s.SetConfig(loadRules(t, edgeRules))
	const workers, overrides, per, rounds = 8, 4, 60, 5
	var admitted [overrides]atomic.Int64
	for r := 0; r < rounds && (r == 0 || b.Pool().Released == 0); r++ {
		sendAcrossReleases(t, s, clk, &admitted, workers, per)
	}
	assert.Positive(t, b.Pool().Released, "limiters released meanwhile")
	for o := range admitted {
		check(admitted[o].Load())
	}
}

// sendAcrossReleases is one round of testDecisionsAcrossReleases: workers
// send per requests of each of len(admitted) overrides, counting the
// admitted ones, while the clock moves 2 minutes.
func sendAcrossReleases(t *testing.T, s *Service, clk *core.ManualClock, admitted *[4]atomic.Int64, workers, per int) {
	overrides := len(admitted)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range overrides * per / workers {
				if w == 0 && i%5 == 0 {
					clk.Advance(20 * time.Second) // 2 minutes a round, within the hour's window
				}
				o := (w + i) % overrides
				req := overridden("10.0.0.1", 20, typev3.RateLimitUnit_HOUR)
				req.Descriptors[0].Limit.UnitMultiplier = wrapperspb.UInt32(uint32(1 + o)) // 4 limits: 20 in 1 to 4 hours
				resp, err := s.ShouldRateLimit(context.Background(), req)
				if !assert.NoError(t, err) {
					return
				}
				if resp.OverallCode == rlsv3.RateLimitResponse_OK {
					admitted[o].Add(1)
				}
			}
		})
	}
	wg.Wait()
}
