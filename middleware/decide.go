package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// outcome is what the limits said about one request. known[i] tells
// whether limit i decided (a peek that denied spares the others). failed
// is the first store failure a limit answered with (an error matching
// core.ErrUnavailable, its decision kept in ds) or, under FailOpen, the
// first limit that gave no decision. overrideBlind (FailOpen) makes a
// denial made blind (see blind) with a store failure no denial, and a
// limit that gives no decision (an error with none, or left behind at
// the limiters' deadline: left[i]) no end of the decision: FailOpen
// serves over them, so the other limits are still asked and still count.
type outcome struct {
	ds            []core.Decision
	known         []bool
	left          []bool
	denied        bool
	failed        error
	overrideBlind bool
}

// newOutcome is the outcome of a decision not yet taken.
func (m *Middleware) newOutcome() outcome {
	n := len(m.cfg.limits)
	return outcome{ds: make([]core.Decision, n), known: make([]bool, n), left: make([]bool, n),
		overrideBlind: m.cfg.failMode == FailOpen}
}

// record keeps limit i's answer: a decision, possibly made while its store
// was down. An error not matching core.ErrUnavailable carries no decision
// (core.Limiter) and is returned, except under FailOpen where, unless the
// caller left (context.Canceled), it is kept as the limit's failure and
// the decision goes on.
func (o *outcome) record(i int, d core.Decision, err error) error {
	if err != nil && !errors.Is(err, core.ErrUnavailable) {
		if !o.overrideBlind || errors.Is(err, context.Canceled) {
			return err
		}
		o.fail(err)
		return nil
	}
	if err != nil {
		o.fail(err)
	}
	o.ds[i], o.known[i] = d, true
	o.denied = o.denied || !d.Allowed && !(o.overrideBlind && err != nil && blind(d))
	return nil
}

// fail keeps err as the outcome's failure unless it has one.
func (o *outcome) fail(err error) {
	if o.failed == nil {
		o.failed = err
	}
}

// leave marks limit i as left behind in the middle of a call, failing
// with err: it has no decision (any answer it had from a peek is dropped)
// and is not asked again.
func (o *outcome) leave(i int, err error) {
	o.left[i], o.known[i] = true, false
	o.fail(err)
}

// step is one call of a decision: a Peek at limit i, or its AllowN.
type step struct {
	i    int
	peek bool
}

// plan lists the calls of a decision of n limits in order: with peeks
// (and two limits or more), a Peek at every limit but the first (whose
// AllowN is its own check), then AllowN on each.
func plan(n int, peekFirst bool) []step {
	var ss []step
	if peekFirst && n > 1 {
		for i := 1; i < n; i++ {
			ss = append(ss, step{i, true})
		}
	}
	for i := 0; i < n; i++ {
		ss = append(ss, step{i, false})
	}
	return ss
}

// deniedBlind reports whether o is denied by blind decisions alone (see
// blind; pick prefers a counted one).
func (o outcome) deniedBlind() bool {
	i := o.pick()
	return o.denied && i >= 0 && blind(o.ds[i])
}

// decide asks every limit about one unit of key at now: peeks first when
// configured, denying at once if one of them would deny, then AllowN in
// order until one denies (under FailOpen, one that denies blind or gives
// no decision does not stop the others; under FailAsLimiter, once the
// only denials are blind, the limits not asked yet are peeked at, so that
// a counted denial, 429, is found with the peeks or without). A decision returned with a store
// failure counts as any other; the error returned means no decision.
func (m *Middleware) decide(ctx context.Context, key string, now time.Time) (outcome, error) {
	o := m.newOutcome()
	err := m.resume(ctx, key, now, &o, 0, nil)
	return o, err
}

// resume takes the steps of m.plan from from on, recording the answers in
// o (see decide); a limit left behind is not asked again. r, when not nil,
// is the run taking them, which the middleware may leave behind: it then
// takes no further step and records nothing.
func (m *Middleware) resume(ctx context.Context, key string, now time.Time, o *outcome, from int, r *run) error {
	for s := from; s < len(m.plan); s++ {
		st, pastBlind := m.plan[s], false
		if !st.peek && o.denied {
			if !m.peekPastBlind || !o.deniedBlind() {
				return nil
			}
			if o.known[st.i] {
				continue
			}
			// a blind denial hides no counted one: peek, spend nothing
			st.peek, pastBlind = true, true
		}
		if o.left[st.i] {
			continue
		}
		skip, stop := r.begin(s, st.i, m.bounds[st.i])
		if stop {
			return nil
		}
		if skip {
			continue
		}
		d, err := m.ask(ctx, st, key, now)
		if !r.end() {
			return nil
		}
		err = o.record(st.i, d, err)
		r.unlock()
		if err != nil && !pastBlind { // past a blind denial, a peek with no decision changes nothing
			return err
		}
	}
	return nil
}

// ask makes step st's call.
func (m *Middleware) ask(ctx context.Context, st step, key string, now time.Time) (core.Decision, error) {
	l := m.cfg.limits[st.i].limiter
	if st.peek {
		return l.Peek(ctx, key, now)
	}
	return l.AllowN(ctx, key, now, 1)
}

// decideWithin runs decide under the configured timeout and returns when it
// expires even if a limiter ignores its context; the abandoned call finishes
// in the background and its result is dropped (unless it is already there
// when the deadline is seen). The limiters' context expires answerMargin
// before that, so a limiter that honours it (a budget limiter giving up on
// Redis and deciding on its view) still delivers its decision; under
// FailOpen a call still running then, of a limiter not DeadlineBound, is
// left behind (see passOn) and the limits not yet asked are asked in that
// margin; under FailAsLimiter a denial made blind before the deadline
// stands though the peeks past it (see decide) are still running. Under
// WithTrustedDeadline, or when every limiter is
// DeadlineBound, it only sets the deadline and calls decide directly: the
// deadline then bounds only the limiters' waits on their stores, and a
// decision they make without waiting arrives however late the machine
// runs it.
func (m *Middleware) decideWithin(ctx context.Context, key string, now time.Time) (outcome, error) {
	if m.cfg.timeout == 0 {
		return m.decide(ctx, key, now)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.timeout)
	defer cancel()
	if m.cfg.inline || m.bound {
		return m.decideInline(ctx, key, now)
	}
	lctx, lcancel := context.WithTimeout(ctx, m.cfg.timeout-answerMargin(m.cfg.timeout))
	defer lcancel()
	r := m.start(lctx, key, now, m.newOutcome(), 0, false, nil)
	if m.cfg.failMode == FailOpen {
		r = m.passOn(ctx, lctx, key, now, r)
	}
	select {
	case <-r.done:
		return r.result()
	case <-ctx.Done():
		select {
		case <-r.done: // both ready (the machine stalled): keep the decision
			return r.result()
		default:
		}
		if m.cfg.failMode == FailOpen && !errors.Is(ctx.Err(), context.Canceled) {
			return m.closeRun(ctx, lctx, key, now, r).result()
		}
		if errors.Is(ctx.Err(), context.Canceled) {
			return outcome{}, gaveUp(ctx)
		}
		if o, ok := r.settle(); ok {
			return o, nil
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
