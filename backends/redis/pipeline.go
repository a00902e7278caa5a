package redis

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// call is one script call waiting in a batch. val and err are set before
// done is closed. deadline (monoNow's clock) is when its caller stops
// waiting: its arrival plus the limiter's timeout, or the caller's ctx
// deadline if earlier. A call still queued at its deadline, or whose caller
// left (abandoned: ctx ended), is never sent, so a caller told "failed" is
// not counted behind its back unless its call was already on the wire.
type call struct {
	req       request
	deadline  int64
	abandoned atomic.Bool
	val       any
	err       error
	done      chan struct{}
}

// callDeadline is when a call arriving at now (monoNow's clock) stops
// being waited for: now plus timeout (saturated, so a huge timeout means
// never), or ctx's deadline if earlier.
func callDeadline(ctx context.Context, now int64, timeout time.Duration) int64 {
	d := int64(math.MaxInt64)
	if int64(timeout) < d-now {
		d = now + int64(timeout)
	}
	if dl, ok := ctx.Deadline(); ok {
		// Saturated as the timeout is: a deadline centuries away would
		// wrap the sum negative and fail the call at once.
		if rem := int64(time.Until(dl)); rem < d-now {
			d = now + rem
		}
	}
	return d
}

// monoBase is the origin of monoNow.
var monoBase = time.Now()

// monoNow reads the monotonic clock, in ns since monoBase.
func monoNow() int64 { return int64(time.Since(monoBase)) }

// maxInflight is how many pipelines a batcher keeps in flight at once.
const maxInflight = 2

// batcher gathers concurrent calls into pipelines of at most maxBatch
// calls. A call goes out at once when no pipeline is in flight (so a lone
// caller pays no delay). Otherwise it waits with the others until window has
// passed since the first of them arrived or maxBatch are waiting, and then
// goes out as a second pipeline if fewer than maxInflight are in flight, or
// when one returns. Sending a second pipeline at once for a single call, as
// an earlier version did, split a crowd into many one-call pipelines (7.8
// calls per round trip at 64 callers). exec must close every call's done.
//
// lone, when set, runs a call that finds nothing in flight and nothing
// queued in the caller's own goroutine, saving the hand-off to another
// goroutine (about a third of a lone caller's throughput). go-redis bounds
// a socket read by a context's deadline (with ContextTimeoutEnabled) but
// never notices a cancellation, so lone is set only for such a client, and
// used only for a ctx that can never be cancelled (ctx.Done() == nil, as
// context.Background): the limiter's timeout then bounds the call. Any
// other call is handed off, so that its caller leaves when its ctx ends.
type batcher struct {
	exec     func([]*call)
	lone     func(ctx context.Context, c *call)
	window   time.Duration
	maxBatch int
	timeout  time.Duration // each call's deadline is its arrival plus timeout

	mu       sync.Mutex
	pending  []*call
	gen      uint64 // bumped whenever pending is sent
	inflight int
}

// do queues req and waits for its answer, for ctx to end or for the
// limiter's timeout to pass since it arrived (a timer per call, cheaper
// than the context per call it replaced). See call for what is never sent.
func (b *batcher) do(ctx context.Context, req request) (any, error) {
	if b.lone != nil && ctx.Done() == nil && b.claimIdle() {
		defer b.finished()   // even if a go-redis hook panics: a lost slot would stall every later call
		c := &call{req: req} // bounded by the limiter's timeout in lone; no deadline, no channel
		b.lone(ctx, c)
		return c.val, c.err
	}
	now := monoNow()
	c := &call{req: req, deadline: callDeadline(ctx, now, b.timeout), done: make(chan struct{})}
	t := time.NewTimer(time.Duration(c.deadline - now))
	defer t.Stop()
	b.submit(c)
	select {
	case <-c.done:
		return c.val, c.err
	case <-ctx.Done():
		c.abandoned.Store(true)
		return nil, ctx.Err()
	case <-t.C:
		c.abandoned.Store(true)
		return nil, context.DeadlineExceeded
	}
}

func (b *batcher) submit(c *call) {
	b.mu.Lock()
	b.pending = append(b.pending, c)
	switch {
	case b.inflight == 0 || (len(b.pending) >= b.maxBatch && b.inflight < maxInflight):
		// Send from another goroutine even when this caller could: do must
		// stay free to give up when the caller's context ends.
		b.sendLocked()
	case len(b.pending) == 1:
		gen := b.gen
		time.AfterFunc(b.window, func() { b.flush(gen) })
	}
	b.mu.Unlock()
}

// flush sends the calls the timer of generation gen was started for, unless
// they are already sent or maxInflight pipelines are in flight (the first
// to return sends them).
func (b *batcher) flush(gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen == gen && len(b.pending) > 0 && b.inflight < maxInflight {
		b.sendLocked()
	}
}

// sendLocked sends the first maxBatch pending calls (or all, if fewer) as
// one pipeline from a new goroutine; b.mu must be held.
func (b *batcher) sendLocked() {
	go b.run(b.takeLocked())
}

// takeLocked removes up to maxBatch calls from pending and counts them in
// flight; b.mu must be held.
func (b *batcher) takeLocked() []*call {
	k := min(len(b.pending), b.maxBatch)
	batch := b.pending[:k:k]
	b.pending = append([]*call(nil), b.pending[k:]...)
	b.gen++
	b.inflight++
	return batch
}

// claimIdle counts a lone call in flight when nothing is in flight or
// queued, and reports whether it did.
func (b *batcher) claimIdle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.inflight > 0 || len(b.pending) > 0 {
		return false
	}
	b.inflight++
	return true
}

// run executes one pipeline, then finished.
func (b *batcher) run(batch []*call) {
	b.exec(batch)
	b.finished()
}

// finished ends one call or pipeline in flight and sends what queued
// meanwhile, in pipelines of at most maxBatch while fewer than maxInflight
// are in flight.
func (b *batcher) finished() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inflight--
	for len(b.pending) > 0 && b.inflight < maxInflight {
		b.sendLocked()
	}
}

// runPipeline sends calls as one pipeline of EVALSHA, then the ones Redis
// answered NOSCRIPT as one pipeline of EVAL, and wakes every caller. Calls
// whose caller already left (expire) fail at once, unsent. The pipeline
// ends by the latest deadline among the rest: ending it by the earliest
// would fail every call of a batch whose oldest call had only moments left,
// while the callers of earlier deadlines leave by their own timers anyway.
func (l *Limiter) runPipeline(calls []*call) {
	calls = expire(calls)
	if len(calls) == 0 {
		return
	}
	deadline := calls[0].deadline
	for _, c := range calls[1:] {
		deadline = max(deadline, c.deadline)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(deadline-monoNow()))
	defer cancel()
	reqs := make([]request, len(calls))
	for i, c := range calls {
		reqs[i] = c.req
	}
	for i, cmd := range l.execAll(ctx, reqs) {
		calls[i].val, calls[i].err = cmd.Result()
		close(calls[i].done)
	}
}

// execAll sends reqs as one pipeline of EVALSHA, then the ones Redis
// answered NOSCRIPT as one pipeline of EVAL, and returns each one's
// command, in reqs' order.
func (l *Limiter) execAll(ctx context.Context, reqs []request) []*goredis.Cmd {
	l.calls.Add(uint64(len(reqs)))
	cmds := l.pipeline(ctx, reqs, l.script.EvalSha)
	var lost []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			lost = append(lost, i)
		}
	}
	if len(lost) > 0 {
		retry := make([]request, len(lost))
		for j, i := range lost {
			retry[j] = reqs[i]
		}
		for j, cmd := range l.pipeline(ctx, retry, l.script.Eval) {
			cmds[lost[j]] = cmd
		}
	}
	return cmds
}

type sender func(ctx context.Context, c goredis.Scripter, keys []string, args ...any) *goredis.Cmd

// pipeline sends one script call per element of reqs in one round trip.
func (l *Limiter) pipeline(ctx context.Context, reqs []request, send sender) []*goredis.Cmd {
	l.trips.Add(1)
	p := l.client.Pipeline()
	cmds := make([]*goredis.Cmd, len(reqs))
	for i, r := range reqs {
		cmds[i] = send(ctx, p, r.keys, r.args...)
	}
	_, _ = p.Exec(ctx) // each command carries its own error
	return cmds
}

// expire fails, and closes, the calls whose deadline has passed or whose
// caller left, and returns the others (reusing calls' array).
func expire(calls []*call) []*call {
	now := monoNow()
	live := calls[:0]
	for _, c := range calls {
		if c.deadline > now && !c.abandoned.Load() {
			live = append(live, c)
			continue
		}
		c.err = context.DeadlineExceeded
		close(c.done)
	}
	return live
}

// runLone runs c alone in the caller's goroutine, as plain mode does.
func (l *Limiter) runLone(ctx context.Context, c *call) {
	c.val, c.err = l.runTimed(ctx, c.req)
}
