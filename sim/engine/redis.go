package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	goredis "github.com/redis/go-redis/v9"
)

// redisWorkers is how many identities' request streams are in flight to
// Redis at once in pure-Redis mode.
const redisWorkers = 256

// redisBatch bounds one pipeline of pure-Redis mode.
const redisBatch = 64

// runRedis sends every decision to backends/redis, one EVALSHA each with the
// deciding PoP's clock as now. To finish quickly it lets calls of different identities
// share pipelines (the backend's WithPipelining): identities are split over
// redisWorkers goroutines, each sending its identities' requests one at a
// time in trace order, so each identity's order at Redis is its order in
// time. Different identities touch different keys, so how they interleave
// changes no decision. Round trips are still counted one per decision, as a
// deployment without that cross-PoP batching would pay; each decision adds
// its PoP's modelled round-trip time.
func runRedis(ctx context.Context, e *Env) (*outcome, error) { return e.runRedis(ctx, e.PoPAt) }

// runRedisServerTime is pure-Redis mode with the clock at Redis instead of
// the PoPs': every script gets the request's true time, whatever the
// skew of the PoP it arrived at. It models backends/redis' WithServerTime,
// which cannot itself run here: Redis' TIME is the real wall clock, not
// the simulation's virtual one. Without skew it is exactly runRedis.
func runRedisServerTime(ctx context.Context, e *Env) (*outcome, error) {
	return e.runRedis(ctx, e.At)
}

// runRedis is pure-Redis mode with clock(i) as the now of request i.
func (e *Env) runRedis(ctx context.Context, clock func(i int) time.Time) (*outcome, error) {
	client, _ := e.countedClient(redisWorkers)
	defer client.Close()
	lim, err := e.redisLimiter(client)
	if err != nil {
		return nil, err
	}
	o := newOutcome(len(e.Trace.Requests))
	order := make([]int, len(e.Trace.Requests))
	for i := range order {
		order[i] = i
	}
	err = e.byIdentity(order, func(i int) error {
		r := e.Trace.Requests[i]
		d, err := lim.AllowN(ctx, e.Key(r.ID), clock(i), int64(r.N))
		if err != nil {
			return fmt.Errorf("redis decision %d: %w", i, err)
		}
		o.allowed[i], o.latency[i] = d.Allowed, e.Net.RedisRTT[r.PoP]
		return nil
	})
	if err != nil {
		return nil, err
	}
	o.roundTrips = int64(len(e.Trace.Requests))
	return o, nil
}

// byIdentity calls decide for every request index in order, spread over
// redisWorkers goroutines by identity (identity modulo redisWorkers), so
// each identity's requests go one at a time in order while different
// identities' calls share pipelines. It returns the first error.
func (e *Env) byIdentity(order []int, decide func(i int) error) error {
	shares := e.shares(order)
	errs := make([]error, redisWorkers)
	var done countdown
	var wg sync.WaitGroup
	for w, share := range shares {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range share {
				if errs[w] = decide(i); errs[w] != nil {
					return
				}
				done.add(e)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// shares splits order by worker (identity modulo redisWorkers), keeping
// its order within each worker's share, so a worker walks its own
// requests rather than the whole trace.
func (e *Env) shares(order []int) [][]int {
	counts := make([]int, redisWorkers)
	for _, i := range order {
		counts[int(e.Trace.Requests[i].ID)%redisWorkers]++
	}
	all := make([]int, 0, len(order))
	shares := make([][]int, redisWorkers)
	for w, n := range counts {
		shares[w] = all[len(all) : len(all) : len(all)+n]
		all = all[:len(all)+n]
	}
	for _, i := range order {
		w := int(e.Trace.Requests[i].ID) % redisWorkers
		shares[w] = append(shares[w], i)
	}
	return shares
}

// redisLimiter is pure-Redis mode's limiter on client: pipelined across
// identities, a timeout no simulated run reaches, keys kept for the run.
func (e *Env) redisLimiter(client goredis.UniversalClient) (*redis.Limiter, error) {
	return redis.New(client, e.Limit, redis.WithPrefix(e.Namespace),
		redis.WithPipelining(100*time.Microsecond, redisBatch), redis.WithTimeout(30*time.Second),
		redis.WithExpirySlack(e.expirySlack()))
}

// countdown counts finished decisions across goroutines and reports them
// to the progress callback one at a time.
type countdown struct {
	mu sync.Mutex
	n  int
}

func (c *countdown) add(e *Env) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	e.progress(c.n)
}
