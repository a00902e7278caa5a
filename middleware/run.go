package middleware

import (
	"context"
	"sync"
	"time"
)

// run is a decision's steps taken on a goroutine of their own (see
// decideWithin), which the middleware can leave behind in the middle of a
// limiter's call: from then on it takes no further step and records
// nothing, and its outcome so far belongs to the middleware.
type run struct {
	mu        sync.Mutex
	o         outcome
	err       error
	step      int  // the last step begun
	inCall    bool // step's call has not returned
	left      bool
	boundOnly bool // ask only DeadlineBound limiters; leave the others with skipErr
	skipErr   error
	over      bool // resume returned: o and err are final
	done      chan struct{}
}

// start takes the steps of m.plan from from on, into o, on a new run
// (under boundOnly, those of DeadlineBound limiters only, the others left
// failing with err).
func (m *Middleware) start(ctx context.Context, key string, now time.Time, o outcome, from int, boundOnly bool, err error) *run {
	r := &run{o: o, step: from - 1, boundOnly: boundOnly, skipErr: err, done: make(chan struct{})}
	go func() {
		err := m.resume(ctx, key, now, &r.o, from, r)
		r.mu.Lock()
		r.err, r.over = err, true
		r.mu.Unlock()
		close(r.done)
	}()
	return r
}

// begin marks step s, a call to limit i (bound: DeadlineBound), as begun.
// stop means r was left behind; skip that r asks DeadlineBound limiters
// only and limit i was left instead. A nil r (decide on the caller's
// goroutine) neither stops nor skips.
func (r *run) begin(s, i int, bound bool) (skip, stop bool) {
	if r == nil {
		return false, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left {
		return false, true
	}
	r.step = s
	if r.boundOnly && !bound {
		r.o.leave(i, r.skipErr)
		return true, false
	}
	r.inCall = true
	return false, false
}

// end marks the call returned and, unless r was left behind (false), keeps
// r locked for its answer to be recorded; unlock releases it.
func (r *run) end() bool {
	if r == nil {
		return true
	}
	r.mu.Lock()
	r.inCall = false
	if r.left {
		r.mu.Unlock()
		return false
	}
	return true
}

func (r *run) unlock() {
	if r != nil {
		r.mu.Unlock()
	}
}

// result is r's outcome and error once it is over.
func (r *run) result() (outcome, error) {
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.o, r.err
}

// passOn (FailOpen) waits for r until the limiters' context lctx expires,
// then hands it over (see handOver): a call still running then, of a
// limiter that may ignore its context, is left behind, and the limits not
// asked yet are asked, under lctx already expired (a limiter that honours
// it answers at once, from local state or blind), within what is left of
// the deadline. It returns the run to wait for; the caller gone, r itself.
func (m *Middleware) passOn(ctx, lctx context.Context, key string, now time.Time, r *run) *run {
	select {
	case <-r.done:
		return r
	case <-lctx.Done():
	}
	if ctx.Err() != nil {
		return r
	}
	return m.handOver(lctx, key, now, r, gaveUp(lctx), false)
}

// closeRun (FailOpen) hands r over at the deadline, ctx's, asking only
// DeadlineBound limiters from then on: those answer by their context's
// deadline, which has passed, so the run it returns ends without waiting
// on a store; the other limits not asked yet, and one whose call is still
// running, give no decision.
func (m *Middleware) closeRun(ctx, lctx context.Context, key string, now time.Time, r *run) *run {
	return m.handOver(lctx, key, now, r, gaveUp(ctx), true)
}

// handOver leaves r behind when it is in the call of a limiter that is not
// DeadlineBound, that limit failing with err, and takes the steps after it
// on a new run, which it returns; otherwise (r over, between two calls, or
// in a DeadlineBound limiter's call, which answers by its context's
// deadline) it returns r. Under boundOnly the run returned asks only
// DeadlineBound limiters from then on.
func (m *Middleware) handOver(lctx context.Context, key string, now time.Time, r *run, err error, boundOnly bool) *run {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over {
		return r
	}
	if !r.inCall || m.bounds[m.plan[r.step].i] {
		if boundOnly {
			r.boundOnly, r.skipErr = true, err
		}
		return r
	}
	r.o.leave(m.plan[r.step].i, err)
	r.left = true
	return m.start(lctx, key, now, r.o, r.step+1, boundOnly, err)
}

// settle (FailAsLimiter) leaves r behind, at the deadline, when its
// outcome so far is a denial made blind (see deniedBlind): r then only
// peeks at the limits not asked yet, looking for a counted denial, so it
// counts nothing more, and that denial is the decision, not lost to a
// peek that hangs. It reports false, leaving r be, otherwise.
func (r *run) settle() (outcome, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.over || !r.o.denied || !r.o.deniedBlind() {
		return outcome{}, false
	}
	r.left = true
	return r.o, true
}
