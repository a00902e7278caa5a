package redis

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// Ask is one decision of AllowEach: N units of Key at Now.
type Ask struct {
	Key string
	Now time.Time
	N   int64
}

// AllowEach decides every ask as AllowN would, in one pipeline (one round
// trip, bounded by the limiter's timeout): Redis runs the script calls in
// asks' order, so asks of one key see each other as AllowN called once per
// ask in that order would. Except when Redis lost the script (a restart,
// SCRIPT FLUSH) and another client loads it while the pipeline runs (any
// process deciding at that Redis does on its first call after the loss,
// even when this caller runs no other AllowEach): the calls refused before
// that are sent again (EVAL) after the rest ran, so a caller that needs a
// key's asks decided in order must give each key at most one ask per
// call. out[i] (out is at least as long as asks) gets ask i's
// decision. It is for a caller holding many decisions at once, a
// replay of recorded traffic for instance: no goroutine per call waits in
// a batch (WithPipelining), which a replay would pay for per call. A bad
// key or weight, or an out shorter than asks, fails before anything is
// sent (a core error matching core.ErrInvalid); a call Redis failed gets
// the fail-mode decision, or no decision when a cluster node redirected it
// (see RedirectError), and the first such failure is returned, as a
// *core.UnavailableError or a *RedirectError. ctx cancelled (the caller
// left): nothing sent, or, for the calls Redis had not answered, no
// decision, and a *CanceledError (see AllowN). No asks: nil, nothing sent.
func (l *Limiter) AllowEach(ctx context.Context, asks []Ask, out []core.Decision) error {
	if len(out) < len(asks) {
		return fmt.Errorf("%w: AllowEach: %d asks but room for %d decisions", core.ErrInvalid, len(asks), len(out))
	}
	if len(asks) == 0 {
		return nil // nothing to send, no round trip counted
	}
	reqs := make([]request, len(asks))
	for i, a := range asks {
		if err := core.ValidateKey(a.Key); err != nil {
			return err
		}
		if err := l.limit.CheckWeight(a.N); err != nil {
			return err
		}
		if err := l.checkTime(a.Now); err != nil {
			return err
		}
		reqs[i] = l.request(a.Key, core.Millis(a.Now), a.N, true)
	}
	if err := canceled(ctx, "redis evalsha"); err != nil {
		return err // the caller left: nothing sent
	}
	ctx, cancel := context.WithTimeout(ctx, l.cfg.timeout)
	defer cancel()
	var first error
	for i, cmd := range l.execAll(ctx, reqs) {
		v, err := cmd.Result()
		if err != nil && canceled(ctx, "redis evalsha") != nil {
			// the caller left while Redis had the calls: no decision
			out[i], err = core.Decision{}, canceled(ctx, "redis evalsha")
			if first == nil {
				first = err
			}
			continue
		}
		if err != nil {
			l.reload.AfterError(l.client) // a dead master: find its promoted replica
		} else {
			out[i], err = l.parseReply(v)
		}
		if err != nil {
			if cmd.Err() != nil {
				out[i], err = l.failure("redis evalsha", err)
			} else {
				out[i], err = l.failDecision(), &core.UnavailableError{Op: "redis evalsha", Err: err}
			}
			if first == nil {
				first = err
			}
		}
	}
	return first
}
