package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// outcome is what the limits said about one request. known[i] tells
// whether limit i was asked at all (a peek that denied spares the others).
// failed is the first store failure a limit answered with (an error
// matching core.ErrUnavailable, its decision kept in ds). overrideBlind
// (FailOpen) makes a denial made blind (see blind) with a store failure no
// denial: FailOpen serves over it, so the other limits are still asked
// and still count.
type outcome struct {
	ds            []core.Decision
	known         []bool
	denied        bool
	failed        error
	overrideBlind bool
}

// record keeps limit i's answer: a decision, possibly made while its store
// was down. An error not matching core.ErrUnavailable carries no decision
// (core.Limiter) and is returned.
func (o *outcome) record(i int, d core.Decision, err error) error {
	if err != nil && !errors.Is(err, core.ErrUnavailable) {
		return err
	}
	if err != nil && o.failed == nil {
		o.failed = err
	}
	o.ds[i], o.known[i] = d, true
	o.denied = o.denied || !d.Allowed && !(o.overrideBlind && err != nil && blind(d))
	return nil
}

// decide asks every limit about one unit of key at now: peeks first when
// configured, then AllowN in order until one denies (under FailOpen, one
// that denies blind does not stop the others). A decision returned with a
// store failure counts as any other; the error returned means no decision.
func (m *Middleware) decide(ctx context.Context, key string, now time.Time) (outcome, error) {
	n := len(m.cfg.limits)
	o := outcome{ds: make([]core.Decision, n), known: make([]bool, n), overrideBlind: m.cfg.failMode == FailOpen}
	if m.cfg.peekFirst && n > 1 {
		if err := m.peekRest(ctx, key, now, &o); err != nil || o.denied {
			return o, err
		}
	}
	for i, l := range m.cfg.limits {
		d, err := l.limiter.AllowN(ctx, key, now, 1)
		if err := o.record(i, d, err); err != nil {
			return o, err
		}
		if o.denied {
			return o, nil
		}
	}
	return o, nil
}

// peekRest peeks at every limit but the first (whose AllowN is its own
// check) and marks the outcome denied if any of them would deny.
func (m *Middleware) peekRest(ctx context.Context, key string, now time.Time, o *outcome) error {
	for i := 1; i < len(m.cfg.limits); i++ {
		d, err := m.cfg.limits[i].limiter.Peek(ctx, key, now)
		if err := o.record(i, d, err); err != nil {
			return err
		}
	}
	return nil
}

// decideWithin runs decide under the configured timeout and returns when it
// expires even if a limiter ignores its context; the abandoned call finishes
// in the background and its result is dropped (unless it is already there
// when the deadline is seen). The limiters' context expires answerMargin
// before that, so a limiter that honours it (a budget limiter giving up on
// Redis and deciding on its view) still delivers its decision. Under
// WithTrustedDeadline, or when every limiter is DeadlineBound, it only sets
// the deadline and calls decide directly: the deadline then bounds only
// the limiters' waits on their stores, and a decision they make without
// waiting arrives however late the machine runs it.
func (m *Middleware) decideWithin(ctx context.Context, key string, now time.Time) (outcome, error) {
	if m.cfg.timeout == 0 {
		return m.decide(ctx, key, now)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.timeout)
	defer cancel()
	if m.cfg.inline || m.bound {
		return m.decideInline(ctx, key, now)
	}
	type result struct {
		o   outcome
		err error
	}
	done := make(chan result, 1)
	lctx, lcancel := context.WithTimeout(ctx, m.cfg.timeout-answerMargin(m.cfg.timeout))
	go func() {
		defer lcancel()
		o, err := m.decide(lctx, key, now)
		done <- result{o, err}
	}()
	select {
	case res := <-done:
		return res.o, res.err
	case <-ctx.Done():
		select {
		case res := <-done: // both ready (the machine stalled): keep the decision
			return res.o, res.err
		default:
		}
		return outcome{}, gaveUp(ctx)
	}
}

// gaveUp is the error of a decision the middleware stopped waiting for
// when ctx ended: the caller's context cancelled (the client hung up,
// which says nothing of the store) matches context.Canceled and not
// core.ErrUnavailable; the deadline passed is a *core.UnavailableError.
func gaveUp(ctx context.Context) error {
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return fmt.Errorf("middleware: rate-limit decision: caller gone: %w", err)
	}
	return &core.UnavailableError{Op: "middleware: rate-limit decision", Err: ctx.Err()}
}

// answerMargin is how long before the middleware stops waiting the
// limiters' context expires: a tenth of the timeout, at most 10 ms.
func answerMargin(timeout time.Duration) time.Duration {
	return min(timeout/10, 10*time.Millisecond)
}

// decideInline calls decide on this goroutine; an error after the deadline
// passed is reported as the deadline's, like the guarded path does.
func (m *Middleware) decideInline(ctx context.Context, key string, now time.Time) (outcome, error) {
	o, err := m.decide(ctx, key, now)
	if err != nil && ctx.Err() != nil {
		return o, gaveUp(ctx)
	}
	return o, err
}

// pick returns the index of the most restrictive limit: when denied, the
// denying limit with the longest RetryAfter; otherwise the one with the
// fewest units remaining, ties broken by the longest ResetAfter. A decision
// made from counted state wins over one a limiter made blind because its
// store was down (see blind).
func (o outcome) pick() int {
	best := -1
	for i, d := range o.ds {
		if !o.known[i] || (o.denied && d.Allowed) {
			continue
		}
		if best < 0 || o.tighter(d, o.ds[best]) {
			best = i
		}
	}
	return best
}

func (o outcome) tighter(a, b core.Decision) bool {
	if blind(a) != blind(b) {
		return blind(b)
	}
	if o.denied {
		return a.RetryAfter > b.RetryAfter
	}
	if a.Remaining != b.Remaining {
		return a.Remaining < b.Remaining
	}
	return a.ResetAfter > b.ResetAfter
}

// blind reports whether d is a fail-mode decision made with the store down
// and nothing counted (core.SourceFailOpen, core.SourceFailClosed): it says
// nothing about the identity's quota.
func blind(d core.Decision) bool {
	return d.Source == core.SourceFailOpen || d.Source == core.SourceFailClosed
}
