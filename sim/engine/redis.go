package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// redisLanes is how many goroutines send pure-Redis mode's pipelines:
// each sends its identities' calls (identity modulo redisLanes), so while
// Redis runs one lane's pipeline the others encode and read theirs.
const redisLanes = 4

// redisBatch bounds one pipeline of pure-Redis mode.
const redisBatch = 128

// runRedis sends every decision to backends/redis, one EVALSHA each with the
// deciding PoP's clock as now. To finish quickly it lets calls share
// pipelines (pipelined): each identity's calls reach Redis one after the
// other in trace order, so each identity's order at Redis is its order in
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
	client, _ := e.countedClient(redisLanes)
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
	err = e.pipelined(ctx, lim, order, func(i int) (time.Time, string, bool) { return clock(i), e.Key(e.Trace.Requests[i].ID), true },
		func(i int, d core.Decision) {
			o.allowed[i], o.latency[i], o.waited[i] = d.Allowed, e.Net.RedisRTT[e.Trace.Requests[i].PoP], true
		})
	if err != nil {
		return nil, err
	}
	o.roundTrips = int64(len(e.Trace.Requests))
	return o, nil
}

// pipelined decides the requests of order through lim: ask(i) says whether
// request i goes to Redis (false: nothing is sent for it), at what now
// and under what key, and done(i, d) gets its decision. The requests are
// split over redisLanes goroutines by identity, each sending its share,
// in order, in pipelines of at most redisBatch (lim.AllowEach), one after
// the other, and none holding two calls of one identity (AllowEach's rule
// for concurrent callers): each identity's calls run at Redis in order,
// and different identities' share pipelines, which changes no decision.
// It returns the first error.
func (e *Env) pipelined(ctx context.Context, lim *redis.Limiter, order []int,
	ask func(i int) (time.Time, string, bool), done func(i int, d core.Decision)) error {
	errs := make([]error, redisLanes)
	var count countdown
	var wg sync.WaitGroup
	// in[id] is the pipeline identity id's lane is filling when it holds a
	// call of id (each lane numbers its own from 1; a lane alone touches
	// its identities' places)
	in := make([]uint32, e.Trace.Config.Identities)
	for l, share := range e.shares(order) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[l] = e.sendShare(ctx, lim, share, in, ask, done, &count)
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

// sendShare is one lane of pipelined: its share of the requests, in
// pipelines of at most redisBatch, each identity at most once in one.
func (e *Env) sendShare(ctx context.Context, lim *redis.Limiter, share []int, in []uint32,
	ask func(i int) (time.Time, string, bool), done func(i int, d core.Decision), count *countdown) error {
	asks, reqs := make([]redis.Ask, 0, redisBatch), make([]int, 0, redisBatch)
	out := make([]core.Decision, redisBatch)
	batch := uint32(1)
	send := func() error {
		batch++
		if err := lim.AllowEach(ctx, asks, out); err != nil {
			return fmt.Errorf("redis decision %d: %w", reqs[0], err)
		}
		for k, i := range reqs {
			done(i, out[k])
		}
		count.add(e, len(reqs))
		asks, reqs = asks[:0], reqs[:0]
		return nil
	}
	for _, i := range share {
		now, key, ok := ask(i)
		if !ok {
			count.add(e, 1)
			continue
		}
		r := e.Trace.Requests[i]
		if int(r.ID) >= len(in) {
			in = append(in, make([]uint32, int(r.ID)+1-len(in))...) // a lane's own copy from here on
		}
		if in[r.ID] == batch {
			if err := send(); err != nil {
				return err
			}
		}
		in[r.ID] = batch
		asks, reqs = append(asks, redis.Ask{Key: key, Now: now, N: int64(r.N)}), append(reqs, i)
		if len(asks) == redisBatch {
			if err := send(); err != nil {
				return err
			}
		}
	}
	if len(asks) > 0 {
		return send()
	}
	return nil
}

// shares splits order by lane (identity modulo redisLanes), keeping its
// order within each lane's share, so a lane walks its own requests rather
// than the whole trace.
func (e *Env) shares(order []int) [][]int {
	counts := make([]int, redisLanes)
	for _, i := range order {
		counts[int(e.Trace.Requests[i].ID)%redisLanes]++
	}
	all := make([]int, 0, len(order))
	shares := make([][]int, redisLanes)
	for w, n := range counts {
		shares[w] = all[len(all) : len(all) : len(all)+n]
		all = all[:len(all)+n]
	}
	for _, i := range order {
		w := int(e.Trace.Requests[i].ID) % redisLanes
		shares[w] = append(shares[w], i)
	}
	return shares
}

// redisLimiter is pure-Redis mode's limiter on client (its pipelines are
// pipelined's, lim.AllowEach): a timeout no simulated run reaches, keys
// kept for the run.
func (e *Env) redisLimiter(client goredis.UniversalClient) (*redis.Limiter, error) {
	return redis.New(client, e.Limit, redis.WithPrefix(e.Namespace), redis.WithTimeout(30*time.Second),
		redis.WithExpirySlack(e.expirySlack()))
}

// countdown counts finished decisions across goroutines and reports the
// total to the progress callback.
type countdown struct {
	mu sync.Mutex
	n  int
}

func (c *countdown) add(e *Env, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += n
	e.progress(c.n)
}
