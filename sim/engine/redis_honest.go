package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/sim/netmodel"
)

func runRedisHonest(ctx context.Context, e *Env) (*outcome, error) {
	return e.runRedisHonest(ctx, e.PoPAt)
}

func runRedisServerTimeHonest(ctx context.Context, e *Env) (*outcome, error) {
	return e.runRedisHonest(ctx, e.At)
}

// flight is one pure-Redis call on the honest network: when it reaches
// Redis and how long its reply takes back.
type flight struct {
	arrive, back time.Duration
}

// runRedisHonest is pure-Redis mode on the honest network: each request's
// EVALSHA reaches Redis one drawn one-way delay after the request, Redis
// executes the calls of each identity in the order they arrive (calls of
// different identities touch different keys, so how they interleave
// changes nothing and they may share pipelines to finish sooner), and the
// answer comes one drawn delay later: the request's latency. The script
// still gets the request's own time (clock(i)), as backends/redis sends
// it. Faults: during a Redis outage, or with the PoP partitioned when it
// sends, the call fails and the request is admitted uncounted (fail open,
// the usual default; counted in lost); a reply lost to a partition fails
// open too (lost when Redis had denied it). A crash costs pure Redis no
// state and is ignored.
func (e *Env) runRedisHonest(ctx context.Context, clock func(i int) time.Time) (*outcome, error) {
	fl, order := e.flights()
	client, _ := e.countedClient(redisWorkers)
	defer client.Close()
	lim, err := e.redisLimiter(client)
	if err != nil {
		return nil, err
	}
	o := newOutcome(len(e.Trace.Requests))
	var lost atomic.Int64
	err = e.byIdentity(order, func(i int) error {
		return e.redisHonestCall(ctx, lim, clock, i, fl[i], o, &lost)
	})
	if err != nil {
		return nil, err
	}
	o.roundTrips = int64(len(e.Trace.Requests))
	o.lost = lost.Load()
	return o, nil
}

// flights draws every request's trip (in trace order, from the run's
// seeded links) and returns the request indexes in the order their calls
// reach Redis (ties in trace order).
func (e *Env) flights() ([]flight, []int) {
	links := netmodel.NewLinks(e.Net, e.Jitter, e.Trace.Config.Seed)
	fl := make([]flight, len(e.Trace.Requests))
	order := make([]int, len(fl))
	for i, r := range e.Trace.Requests {
		fl[i] = flight{arrive: r.At + links.Up(int(r.PoP)), back: links.Down(int(r.PoP))}
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(fl[a].arrive, fl[b].arrive) })
	return fl, order
}

// redisHonestCall decides request i whose call flies f.
func (e *Env) redisHonestCall(ctx context.Context, lim *redis.Limiter, clock func(int) time.Time,
	i int, f flight, o *outcome, lost *atomic.Int64) error {
	r := e.Trace.Requests[i]
	p, n := int(r.PoP), int64(r.N)
	failOpen := func(lat time.Duration) {
		o.allowed[i], o.latency[i] = true, lat
		lost.Add(n)
	}
	switch {
	case e.Faults.Cut(p, r.At):
		failOpen(callTimeout)
		return nil
	case e.Faults.RedisOutage.Has(f.arrive):
		failOpen(f.arrive + f.back - r.At)
		return nil
	}
	d, err := lim.AllowN(ctx, e.Key(r.ID), clock(i), n)
	if err != nil {
		return fmt.Errorf("redis decision %d: %w", i, err)
	}
	if reply := f.arrive + f.back; !e.Faults.Cut(p, reply) {
		o.allowed[i], o.latency[i] = d.Allowed, reply-r.At
		return nil
	}
	o.allowed[i], o.latency[i] = true, callTimeout
	if !d.Allowed {
		lost.Add(n)
	}
	return nil
}
