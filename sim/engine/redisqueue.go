package engine

import (
	"context"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/sync/hybrid"
	goredis "github.com/redis/go-redis/v9"
)

// redisQueue runs the hybrid's Calls that reached Redis (in virtual time)
// on the real Redis, in the order they arrived, from its own goroutine,
// while the event loop goes on. Redis' state is read only by Calls, and
// each Call runs after every Call that arrived before it, so running them
// later in wall time changes nothing: Redis runs them exactly as it would
// have one at a time at their arrivals. The loop waits for a Call only
// when its reply is due (wait), which is at least one one-way delay of
// virtual time later; meanwhile every Call arriving shares a pipeline
// (hybrid.ExecAll) and Redis works on one core while the loop works on the
// other. Build one with newRedisQueue; close it when the run ends.
type redisQueue struct {
	ctx context.Context
	rdb goredis.UniversalClient // a client of the Nodes' Redis

	mu      sync.Mutex
	cond    *sync.Cond
	waiting []queued // added, not yet taken by the sender
	added   uint64   // tickets handed out
	done    uint64   // tickets whose Calls ran
	closed  bool
	stopped sync.WaitGroup
}

// queued is one Call and its arrival: Redis' clock when it runs.
type queued struct {
	c  *hybrid.Call
	at time.Time
}

func newRedisQueue(ctx context.Context, rdb goredis.UniversalClient) *redisQueue {
	q := &redisQueue{ctx: ctx, rdb: rdb}
	q.cond = sync.NewCond(&q.mu)
	q.stopped.Add(1)
	go q.send()
	return q
}

// add queues c, which reached Redis at at, and returns its ticket for wait.
// The caller must not touch c until wait returns.
func (q *redisQueue) add(c *hybrid.Call, at time.Time) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting = append(q.waiting, queued{c: c, at: at})
	q.added++
	q.cond.Broadcast()
	return q.added
}

// wait returns once the Call of ticket t (and every one before it) ran.
func (q *redisQueue) wait(t uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.done < t {
		q.cond.Wait()
	}
}

// drain waits for every Call added so far.
func (q *redisQueue) drain() {
	q.mu.Lock()
	t := q.added
	q.mu.Unlock()
	q.wait(t)
}

// close runs what is queued and stops the sender.
func (q *redisQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	q.stopped.Wait()
}

// send is the sender: it takes every Call waiting, runs them in one
// pipeline, gives each Redis' clock at its arrival, and marks them done.
func (q *redisQueue) send() {
	defer q.stopped.Done()
	var batch []queued
	var calls []*hybrid.Call
	for {
		q.mu.Lock()
		for len(q.waiting) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.waiting) == 0 {
			q.mu.Unlock()
			return
		}
		batch, q.waiting = q.waiting, batch[:0]
		q.mu.Unlock()
		calls = calls[:0]
		for _, b := range batch {
			calls = append(calls, b.c)
		}
		hybrid.ExecAll(q.ctx, q.rdb, calls)
		for _, b := range batch {
			b.c.SetServerTime(b.at.UnixMilli())
		}
		clear(batch)
		clear(calls)
		q.mu.Lock()
		q.done += uint64(len(batch))
		q.cond.Broadcast()
		q.mu.Unlock()
	}
}
