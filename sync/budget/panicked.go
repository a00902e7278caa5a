package budget

import (
	"context"
	"fmt"
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
	defer func() {
		if p := recover(); p != nil {
			l.mu.Lock()
			l.m.complete(l.arrival(t, sent), c, nil, &CanceledError{Op: "budget script", Err: errPanicked}, false)
			l.mu.Unlock()
			panic(p)
		}
	}()
	r, err = Exec(ctx, l.rdb, l.m, c, l.at(c.Now))
	return r, l.callError(ctx, err)
}

// errPanicked is the cause execDecision completes a Call with whose Exec
// panicked: a caller gone (it unwraps to context.Canceled), as far as the
// Machine is concerned.
var errPanicked = fmt.Errorf("%w: the Redis call panicked", context.Canceled)
