package engine

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/edgelimit/edgelimit/core"
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
// open too (lost when Redis had denied it). A crash denies the requests
// its PoP had sent and not yet got the answer of, as the budget modes'
// crash does (crashOpen); pure Redis keeps no state at the PoP for it to
// lose. A loss of Redis' state (Faults.RedisLoss) gives
// each identity's calls arriving from then on a key of their own, empty:
// its calls run in arrival order, so that is its state forgotten at the
// instant.
func (e *Env) runRedisHonest(ctx context.Context, clock func(i int) time.Time) (*outcome, error) {
	fl, order := e.flights()
	client, _ := e.countedClient(redisLanes)
	defer client.Close()
	lim, err := e.redisLimiter(client)
	if err != nil {
		return nil, err
	}
	c := &honestCalls{e: e, clock: clock, fl: fl, o: newOutcome(len(e.Trace.Requests))}
	c.o.lostAt = make([]int64, len(e.Trace.Requests))
	if err := e.pipelined(ctx, lim, order, c.ask, c.done); err != nil {
		return nil, err
	}
	e.crashOpen(c.o)
	c.o.roundTrips = int64(len(e.Trace.Requests))
	c.o.lost = 0
	for _, n := range c.o.lostAt {
		c.o.lost += n
	}
	return c.o, nil
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

// honestCalls decides pure-Redis mode's requests on the honest network
// (pipelined's ask and done), each call flying fl[i].
type honestCalls struct {
	e     *Env
	clock func(int) time.Time
	fl    []flight
	o     *outcome // its lostAt filled as calls fail open
}

// ask fails request i open when its call cannot reach Redis (its PoP cut
// off when it sends, or Redis down at its arrival), else sends it with the
// script's now, clock(i), under its identity's key (a fresh one when it
// arrives at or after Redis lost its state; the scripts stay loaded, so
// backends/redis' NOSCRIPT path is not simulated).
func (c *honestCalls) ask(i int) (time.Time, string, bool) {
	r, f := c.e.Trace.Requests[i], c.fl[i]
	switch p := int(r.PoP); {
	case c.e.Faults.Cut(p, r.At):
		c.failOpen(i, callTimeout)
		return time.Time{}, "", false
	case c.e.Faults.RedisOutage.Has(f.arrive):
		c.failOpen(i, f.arrive+f.back-r.At)
		return time.Time{}, "", false
	}
	key := c.e.Key(r.ID)
	if l := c.e.Faults.RedisLoss; l > 0 && f.arrive >= l {
		key += "~after-loss"
	}
	return c.clock(i), key, true
}

// done answers request i with Redis' decision d when its reply gets back;
// a reply lost to a partition fails open at the call's timeout (lost when
// Redis had denied it).
func (c *honestCalls) done(i int, d core.Decision) {
	r, f := c.e.Trace.Requests[i], c.fl[i]
	c.o.waited[i] = true
	if reply := f.arrive + f.back; !c.e.Faults.Cut(int(r.PoP), reply) {
		c.o.allowed[i], c.o.latency[i] = d.Allowed, reply-r.At
		return
	}
	c.o.allowed[i], c.o.latency[i] = true, callTimeout
	if !d.Allowed {
		c.o.lostAt[i] = int64(r.N)
	}
}

// failOpen admits request i uncounted, answered after lat: its call
// waited for the refusal or the timeout.
func (c *honestCalls) failOpen(i int, lat time.Duration) {
	c.o.allowed[i], c.o.latency[i], c.o.waited[i] = true, lat, true
	c.o.lostAt[i] = int64(c.e.Trace.Requests[i].N)
}
