package engine

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/sync/hybrid"
	goredis "github.com/redis/go-redis/v9"
)

// redisQueue holds the hybrid's Calls that reached Redis (in virtual time)
// and have not been sent to the real one yet. Redis' state is read only by
// Calls, and each Call runs after every Call that arrived before it, so a
// Call may wait here until its reply is needed: run then sends every
// waiting Call, in arrival order, in one pipeline (hybrid.ExecAll), and
// Redis runs them exactly as it would have one at a time at their
// arrivals. What this buys is wall time: a reply is due at least one
// one-way delay after its arrival, so every Call arriving meanwhile shares
// its round trip to the real Redis.
type redisQueue struct {
	ctx   context.Context
	rdb   goredis.UniversalClient // a client of the Nodes' Redis
	calls []*hybrid.Call
	at    []time.Time // each Call's arrival: Redis' clock when it runs
}

// add queues c, which reached Redis at at.
func (q *redisQueue) add(c *hybrid.Call, at time.Time) {
	q.calls, q.at = append(q.calls, c), append(q.at, at)
}

// run sends every queued Call and gives each Redis' clock at its arrival.
func (q *redisQueue) run() {
	if len(q.calls) == 0 {
		return
	}
	hybrid.ExecAll(q.ctx, q.rdb, q.calls)
	for i, c := range q.calls {
		c.SetServerTime(q.at[i].UnixMilli())
		q.calls[i] = nil
	}
	q.calls, q.at = q.calls[:0], q.at[:0]
}

// need sends the queue when c is still in it: its reply is about to be
// read.
func (q *redisQueue) need(c *hybrid.Call) {
	if !c.Done() {
		q.run()
	}
}
