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
// while the event loop goes on, at most maxPipeline at a time: the
// Calls up to the one the loop waits for first, so it goes on as soon as
// its reply can be read while the sender runs the rest. Redis' state is read only by Calls, and
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
	waiting []queued // added, not yet taken by the sender, from head on
	head    int
	added   uint64 // tickets handed out
	done    uint64 // tickets whose Calls ran
	need    uint64 // the ticket the loop waits for (0: none)
	closed  bool
	stopped sync.WaitGroup
}

// maxPipeline bounds the Calls the sender runs in one pipeline, so the
// reply the loop waits for is marked done soon and the loop goes on while
// the sender runs the rest.
const maxPipeline = 64

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
	if q.done >= t {
		return
	}
	q.need = t
	for q.done < t {
		q.cond.Wait()
	}
	q.need = 0
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

// send is the sender: it takes the Calls waiting (see take), runs them in
// one pipeline, gives each Redis' clock at its arrival, and marks them
// done.
func (q *redisQueue) send() {
	defer q.stopped.Done()
	var batch []queued
	var calls []*hybrid.Call
	for {
		q.mu.Lock()
		for q.head == len(q.waiting) && !q.closed {
			q.cond.Wait()
		}
		if q.head == len(q.waiting) {
			q.mu.Unlock()
			return
		}
		batch = q.take(batch[:0])
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

// take appends to batch the next Calls waiting, at most maxPipeline and,
// when the loop waits, none past its ticket. q.mu must be held.
func (q *redisQueue) take(batch []queued) []queued {
	n := min(len(q.waiting)-q.head, maxPipeline)
	if q.need > q.done {
		n = min(n, int(q.need-q.done))
	}
	batch = append(batch, q.waiting[q.head:q.head+n]...)
	clear(q.waiting[q.head : q.head+n])
	q.head += n
	if q.head == len(q.waiting) || q.head > cap(q.waiting)/2 {
		q.waiting = append(q.waiting[:0], q.waiting[q.head:]...)
		q.head = 0
	}
	return batch
}
