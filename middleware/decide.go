package middleware

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// outcome is what the limits said about one request. known[i] tells
// whether limit i was asked at all (a peek that denied spares the others).
type outcome struct {
	ds     []core.Decision
	known  []bool
	denied bool
}

// decide asks every limit about one unit of key at now: peeks first when
// configured, then AllowN in order until one denies.
func (m *Middleware) decide(ctx context.Context, key string, now time.Time) (outcome, error) {
	n := len(m.cfg.limits)
	o := outcome{ds: make([]core.Decision, n), known: make([]bool, n)}
	if m.cfg.peekFirst && n > 1 {
		if err := m.peekRest(ctx, key, now, &o); err != nil || o.denied {
			return o, err
		}
	}
	for i, l := range m.cfg.limits {
		d, err := l.limiter.AllowN(ctx, key, now, 1)
		if err != nil {
			return o, err
		}
		o.ds[i], o.known[i] = d, true
		if !d.Allowed {
			o.denied = true
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
		if err != nil {
			return err
		}
		o.ds[i], o.known[i] = d, true
		o.denied = o.denied || !d.Allowed
	}
	return nil
}

// decideWithin runs decide under the configured timeout and returns when it
// expires even if a limiter ignores its context; the abandoned call finishes
// in the background and its result is dropped. Under WithTrustedDeadline it
// only sets the deadline and calls decide directly.
func (m *Middleware) decideWithin(ctx context.Context, key string, now time.Time) (outcome, error) {
	if m.cfg.timeout == 0 {
		return m.decide(ctx, key, now)
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.timeout)
	defer cancel()
	if m.cfg.inline {
		return m.decideInline(ctx, key, now)
	}
	type result struct {
		o   outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := m.decide(ctx, key, now)
		done <- result{o, err}
	}()
	select {
	case res := <-done:
		return res.o, res.err
	case <-ctx.Done():
		return outcome{}, &core.UnavailableError{Op: "middleware: rate-limit decision", Err: ctx.Err()}
	}
}

// decideInline calls decide on this goroutine; an error after the deadline
// passed is reported as the deadline's, like the guarded path does.
func (m *Middleware) decideInline(ctx context.Context, key string, now time.Time) (outcome, error) {
	o, err := m.decide(ctx, key, now)
	if err != nil && ctx.Err() != nil {
		return o, &core.UnavailableError{Op: "middleware: rate-limit decision", Err: ctx.Err()}
	}
	return o, err
}

// pick returns the index of the most restrictive limit: when denied, the
// denying limit with the longest RetryAfter; otherwise the one with the
// fewest units remaining, ties broken by the longest ResetAfter.
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
	if o.denied {
		return a.RetryAfter > b.RetryAfter
	}
	if a.Remaining != b.Remaining {
		return a.Remaining < b.Remaining
	}
	return a.ResetAfter > b.ResetAfter
}
