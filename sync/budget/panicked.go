package budget

import (
	"context"
	"fmt"

	"github.com/edgelimit/edgelimit/core"
)

// execDecision runs AllowN's decision Call c (Exec, then callError), the
// request stamped t and the Call sent at sent (the PoP's clock). A panic
// in Exec (a Redis client's hook, say, under an HTTP server that recovers
// its handlers' panics) would leave c neither completed nor settled: the
// identity with a decision Call in flight for good, so a flooding one
// denied here for good (flood.go) and the top-up of any other never asked
// by a decision Call again, and the grant units and free slot the request
// took held. c is completed first as the Call of a caller that left (what
// the request took goes back, its report goes again, Redis is not put
// down, nothing is decided), then the panic goes on.
func (l *Limiter) execDecision(ctx context.Context, c *Call, t, sent int64) (r *Result, err error) {
	defer l.finishOnPanic(func() {
		l.m.complete(l.arrival(t, sent), c, nil, &CanceledError{Op: "budget script", Err: errPanicked}, false)
	})
	r, err = Exec(ctx, l.rdb, l.m, c, l.at(c.Now))
	return r, l.callError(ctx, err)
}

// execPeek runs PeekN's Call c (Exec, then callError), the peek stamped
// t. A panic in Exec would leave the report c may carry (this PoP's
// unreported spends) in flight for good: its number held in the
// decisions' window, so that after 31 more no decision Call carries a
// report, and the spends never sent. c is done first as a failed peek's
// (its report goes again with the next Sync), then the panic goes on.
func (l *Limiter) execPeek(ctx context.Context, c *Call, t int64) (r *Result, err error) {
	defer l.finishOnPanic(func() { l.m.PeekDone(t, c, nil, &CanceledError{Op: "budget peek", Err: errPanicked}) })
	r, err = Exec(ctx, l.rdb, l.m, c, l.at(c.Now))
	return r, l.callError(ctx, err)
}

// errPanicked is the cause a Call whose Exec panicked is completed with
// (execDecision, execReset, execSync): a caller gone (it unwraps to
// context.Canceled), as far as the Machine is concerned.
var errPanicked = fmt.Errorf("%w: the Redis call panicked", context.Canceled)

// execReset runs Reset's Call c (Exec, then callError). A panic in Exec
// would leave c neither done nor failed: its number held in the Resets'
// window for good, so that after 31 more every Reset is refused, and the
// unreported spends it carried never sent. c is done first as the Call of
// a caller that left (its spends go again with the next Sync under its
// number, the view as it was), then the panic goes on.
func (l *Limiter) execReset(ctx context.Context, c *Call) (err error) {
	defer l.finishOnPanic(func() { l.m.ResetDone(c, &CanceledError{Op: "budget reset", Err: errPanicked}) })
	_, err = Exec(ctx, l.rdb, l.m, c, l.at(c.Now))
	return l.callError(ctx, err)
}

// execSync sends a Sync's batches (ExecAll). A panic in it (a Redis
// client's pipeline hook) would leave them in flight for good: every later
// Tick skips their groups, whose spends, returns, claims and top-ups never
// go, and the last group's probe of a Redis counted down is never sent.
// Each is finished first as the batch of a caller that left (kept, sent
// again by the next Sync under its number, Redis not put down), then the
// panic goes on; in Limiter.Start's loop it ends the process, as any
// panic in a goroutine does.
func (l *Limiter) execSync(ctx context.Context, calls []*Call) (res []*Result, errs []error) {
	defer l.finishOnPanic(func() {
		for _, c := range calls {
			if len(l.m.Finish(c, nil, &CanceledError{Op: "budget sync", Err: errPanicked})) > 0 {
				l.wake() // parked denials stand
			}
		}
	})
	return ExecAll(ctx, l.rdb, l.m, calls, l.at(core.Millis(l.clock.Now())))
}

// finishOnPanic, deferred around a Redis call, runs finish under the
// Limiter's lock when the call panicked (handing the Machine the call's
// outcome as a caller gone's), then lets the panic go on; it does nothing
// when the call returned.
func (l *Limiter) finishOnPanic(finish func()) {
	if p := recover(); p != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		finish()
		panic(p)
	}
}
