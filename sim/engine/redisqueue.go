package engine

import (
	"context"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/sync/hybrid"
	goredis "github.com/redis/go-redis/v9"
)

// redisQueue runs the hybrid's Calls that reached Redis (in virtual time)
// on the real Redis from goroutines of its own, its lanes, while the event
// loop goes on. Redis' state is read only by Calls, and each Call runs
// after every Call that arrived before it and touches the same keys, so
// running them later in wall time changes nothing: Redis ends each key as
// it would have running them one at a time at their arrivals.
//
// A decision's Call touches its identity's keys only, so decisions go to
// the lane of their identity (identity modulo the lanes) and different
// lanes' pipelines overlap: Redis runs one lane's while the other's
// goroutine encodes or reads its own. A Sync's batch touches many
// identities: it is a barrier, run alone once every Call before it ran,
// and no Call after it runs before it.
//
// The loop waits for a Call only when its reply is due (wait), at least
// one one-way delay of virtual time later; meanwhile the Calls arriving
// share pipelines (hybrid.ExecAll) of at most maxPipeline, none past the
// Call the loop waits for, so it goes on as soon as its reply can be read.
// Build one with newRedisQueue; close it when the run ends.
type redisQueue struct {
	ctx context.Context
	rdb goredis.UniversalClient // a client of the Nodes' Redis (a connection per lane)

	mu       sync.Mutex
	cond     *sync.Cond
	lanes    []lane
	added    uint64 // tickets handed out
	done     uint64 // every ticket up to done ran
	ran      []bool // tickets after done that ran, from done+1 on
	barriers int    // barriers added
	crossed  int    // barriers that ran
	need     uint64 // the ticket the loop waits for (0: none)
	closed   bool
	stopped  sync.WaitGroup
}

// lane is one goroutine's Calls, in arrival order, from head on.
type lane struct {
	waiting []queued
	head    int
}

// lanes is how many lanes a queue runs, when its Calls may overlap.
const lanes = 2

// maxPipeline bounds the Calls a lane runs in one pipeline, so the reply
// the loop waits for is marked done soon and the loop goes on while the
// lane runs the rest.
const maxPipeline = 64

// queued is one Call, its ticket, its arrival (Redis' clock when it runs),
// and how many barriers were added before it; a barrier's own is its
// number from 1.
type queued struct {
	c       *hybrid.Call
	ticket  uint64
	at      time.Time
	barrier bool
	epoch   int
}

// newRedisQueue starts a queue on rdb with its lanes; overlap false (the
// Calls may touch other keys than their identity's) runs one lane.
func newRedisQueue(ctx context.Context, rdb goredis.UniversalClient, overlap bool) *redisQueue {
	n := 1
	if overlap {
		n = lanes
	}
	q := &redisQueue{ctx: ctx, rdb: rdb, lanes: make([]lane, n)}
	q.cond = sync.NewCond(&q.mu)
	for l := range q.lanes {
		q.stopped.Add(1)
		go q.run(l)
	}
	return q
}

// add queues c, which reached Redis at at, and returns its ticket for
// wait: a decision of identity id (id ≥ 0) or a batch (id < 0). The caller
// must not touch c until wait returns.
func (q *redisQueue) add(c *hybrid.Call, at time.Time, id int) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.added++
	it := queued{c: c, ticket: q.added, at: at, epoch: q.barriers}
	l := 0
	if id < 0 {
		q.barriers++
		it.barrier, it.epoch = true, q.barriers
	} else {
		l = id % len(q.lanes)
	}
	q.lanes[l].waiting = append(q.lanes[l].waiting, it)
	q.ran = append(q.ran, false)
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

// close runs what is queued and stops the lanes.
func (q *redisQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	q.stopped.Wait()
}

// run is lane l's goroutine: it takes the Calls it may run (see take),
// runs them in one pipeline, gives each Redis' clock at its arrival, and
// marks them ran.
func (q *redisQueue) run(l int) {
	defer q.stopped.Done()
	var batch []queued
	var calls []*hybrid.Call
	for {
		q.mu.Lock()
		for {
			batch = q.take(l, batch[:0])
			if len(batch) > 0 || (q.closed && q.lanes[l].head == len(q.lanes[l].waiting)) {
				break
			}
			q.cond.Wait()
		}
		q.mu.Unlock()
		if len(batch) == 0 {
			return
		}
		calls = calls[:0]
		for _, b := range batch {
			calls = append(calls, b.c)
		}
		hybrid.ExecAll(q.ctx, q.rdb, calls)
		for _, b := range batch {
			b.c.SetServerTime(b.at.UnixMilli())
		}
		q.mu.Lock()
		q.finish(batch)
		q.cond.Broadcast()
		q.mu.Unlock()
		clear(batch)
		clear(calls)
	}
}

// take appends to batch the next Calls lane l may run now: a barrier
// alone once every Call before it ran; else the Calls after the last
// barrier that ran, up to the next barrier, at most maxPipeline and, when
// the loop waits for one of them, none past it. q.mu must be held.
func (q *redisQueue) take(l int, batch []queued) []queued {
	ln := &q.lanes[l]
	rest := ln.waiting[ln.head:]
	if len(rest) == 0 {
		return batch
	}
	if rest[0].barrier {
		if q.done == rest[0].ticket-1 {
			batch = append(batch, rest[0])
		}
		return q.took(ln, batch, len(batch))
	}
	n := 0
	for n < len(rest) && n < maxPipeline && !rest[n].barrier && rest[n].epoch <= q.crossed {
		n++
	}
	if need := q.need; need > q.done && n > 0 && rest[0].ticket <= need {
		for k := range n {
			if rest[k].ticket > need {
				n = k
				break
			}
		}
	}
	return q.took(ln, append(batch, rest[:n]...), n)
}

// took removes the first n Calls of ln, taken into batch, and returns
// batch.
func (q *redisQueue) took(ln *lane, batch []queued, n int) []queued {
	clear(ln.waiting[ln.head : ln.head+n])
	ln.head += n
	if ln.head == len(ln.waiting) || ln.head > cap(ln.waiting)/2 {
		// Clear what the move leaves behind: a stale Call holds its Node,
		// and with it a whole view, alive (releaseViews measures that heap).
		k := copy(ln.waiting, ln.waiting[ln.head:])
		clear(ln.waiting[k:])
		ln.waiting, ln.head = ln.waiting[:k], 0
	}
	return batch
}

// finish marks batch ran and moves done past every ticket that ran in a
// row. q.mu must be held.
func (q *redisQueue) finish(batch []queued) {
	for _, b := range batch {
		q.ran[b.ticket-q.done-1] = true
		if b.barrier {
			q.crossed = b.epoch
		}
	}
	k := 0
	for k < len(q.ran) && q.ran[k] {
		k++
	}
	q.done += uint64(k)
	q.ran = append(q.ran[:0], q.ran[k:]...)
}
