package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/prometheus/client_golang/prometheus"
)

// unknownSource is the slot of a core.Source past core.SourceFailClosed,
// labelled "unknown": the known ones are 0 to 4.
const unknownSource = int(core.SourceFailClosed) + 1

// The error types of decision_errors_total.
const (
	errUnavailable = iota // matches core.ErrUnavailable: a decision came with it
	errInvalid            // matches core.ErrInvalid: no decision
	errOther              // anything else: no decision
	errCanceled           // matches context.Canceled: the caller left; a decision when it also matches core.ErrUnavailable
)

var errTypes = [...]string{"unavailable", "invalid", "other", "canceled"}

// limiter is the decorator Wrap returns. Series are resolved once, at Wrap
// or at their first use, so a decision costs two clock reads, one histogram
// observation and one counter increment (two with an error).
type limiter struct {
	next    core.Limiter
	allowed [unknownSource + 1]lazyCounter    // by Source
	denied  [unknownSource + 1]lazyCounter    // by Source
	peeked  [2][unknownSource + 1]lazyCounter // peeks: [0] allowed, [1] denied, by Source
	errs    [len(errTypes)]lazyCounter
	dur     prometheus.Observer
}

var _ core.Limiter = (*limiter)(nil)

// SourceLister is implemented by limiters that say which core.Sources their
// decisions can carry (backends/redis: redis and its fail mode's). Wrap
// uses it when not given sources.
type SourceLister interface {
	Sources() []core.Source
}

// Wrap returns a core.Limiter that forwards every call to l and counts the
// decisions of AllowN and Allow under limiter=name. Peek's decisions,
// which count nothing, go to peeks_total by result and source instead (a
// request the middleware denies on a peek of a limit but its first makes
// no AllowN: that 429 shows there only); a Peek's error is counted in
// decision_errors_total as AllowN's is (so a store outage a limit meets
// only in peeks, behind a middleware that denies on them, still shows
// there), and Reset is forwarded uncounted. When l implements
// core.PeekerN, so does the limiter Wrap returns, its PeekN counted as
// Peek is. Decisions and errors are returned
// unchanged. Wrap the same name twice and both feed the same series.
//
// Every decision is counted by result (allowed, denied) and core.Source,
// including one returned together with an error matching
// core.ErrUnavailable (a budget limiter's counted decision on its view is
// allowed/local or denied/local, a Redis limiter's fail modes
// allowed/fail-open or denied/fail-closed); every error is also counted in
// decision_errors_total by type: "canceled" (matching context.Canceled:
// the caller's context was cancelled, which says nothing of the store; no
// decision is counted, as backends/redis and sync/budget return none with
// it, unless the error also matches core.ErrUnavailable), "unavailable"
// (the store failed, a decision came with it), "invalid" (bad input, no
// decision), "other".
//
// A series exists from the first decision that moves it. sources (or, when
// none are given, l's Sources() if l is a SourceLister) names the Sources
// l can produce: their series are created at once with value 0, so rate()
// and alerts see them before the first decision, and only the pairs that
// can move (fail-open only allows; cached-deny and fail-closed only deny).
func (c *Collector) Wrap(name string, l core.Limiter, sources ...core.Source) core.Limiter {
	w := &limiter{next: l, dur: c.decisionDur.WithLabelValues(name)}
	for i := range w.allowed {
		src := core.Source(i).String()
		w.allowed[i] = lazyCounter{vec: c.decisions, labels: []string{name, "allowed", src}}
		w.denied[i] = lazyCounter{vec: c.decisions, labels: []string{name, "denied", src}}
		w.peeked[0][i] = lazyCounter{vec: c.peeks, labels: []string{name, "allowed", src}}
		w.peeked[1][i] = lazyCounter{vec: c.peeks, labels: []string{name, "denied", src}}
	}
	for i, typ := range errTypes {
		w.errs[i] = lazyCounter{vec: c.decisionErrs, labels: []string{name, typ}}
	}
	if lister, ok := l.(SourceLister); ok && len(sources) == 0 {
		sources = lister.Sources()
	}
	for _, s := range sources {
		if int(s) >= unknownSource {
			continue
		}
		if s != core.SourceCachedDeny && s != core.SourceFailClosed {
			w.allowed[s].get()
		}
		if s != core.SourceFailOpen {
			w.denied[s].get()
		}
	}
	if _, ok := l.(core.PeekerN); ok {
		return peekerN{w}
	}
	return w
}

// AllowN forwards to the wrapped limiter and counts the decision.
func (w *limiter) AllowN(ctx context.Context, key string, now time.Time, n int64) (core.Decision, error) {
	start := time.Now()
	d, err := w.next.AllowN(ctx, key, now, n)
	w.count(start, d, err)
	return d, err
}

// Allow forwards to the wrapped limiter and counts the decision.
func (w *limiter) Allow(ctx context.Context, key string) (core.Decision, error) {
	start := time.Now()
	d, err := w.next.Allow(ctx, key)
	w.count(start, d, err)
	return d, err
}

// Peek forwards to the wrapped limiter, counts the decision it reports in
// peeks_total and its error in decision_errors_total (see Wrap).
func (w *limiter) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	d, err := w.next.Peek(ctx, key, now)
	w.countPeek(d, err)
	return d, err
}

// countPeek counts a peek's decision in peeks_total and its error in
// decision_errors_total (see Wrap).
func (w *limiter) countPeek(d core.Decision, err error) {
	if !w.countErr(err) {
		return
	}
	denied := 0
	if !d.Allowed {
		denied = 1
	}
	w.peeked[denied][min(int(d.Source), unknownSource)].get().Inc()
}

// Reset forwards to the wrapped limiter.
func (w *limiter) Reset(ctx context.Context, key string) error { return w.next.Reset(ctx, key) }

// DeadlineBound forwards the wrapped limiter's DeadlineBound (false when it
// has none), so a middleware sees through the wrapper (see
// middleware.DeadlineBound).
func (w *limiter) DeadlineBound() bool {
	b, ok := w.next.(interface{ DeadlineBound() bool })
	return ok && b.DeadlineBound()
}

// Limit returns the wrapped limiter's policy.
func (w *limiter) Limit() core.Limit { return w.next.Limit() }

// Sources forwards to the wrapped limiter when it is a SourceLister, so a
// wrapped limiter wrapped again keeps the list; nil otherwise.
func (w *limiter) Sources() []core.Source {
	if l, ok := w.next.(SourceLister); ok {
		return l.Sources()
	}
	return nil
}

func (w *limiter) count(start time.Time, d core.Decision, err error) {
	w.dur.Observe(time.Since(start).Seconds())
	if !w.countErr(err) {
		return
	}
	i := min(int(d.Source), unknownSource)
	if d.Allowed {
		w.allowed[i].get().Inc()
		return
	}
	w.denied[i].get().Inc()
}

// countErr counts err, when not nil, in decision_errors_total by type, and
// reports whether a decision came with it: with no error, or one matching
// core.ErrUnavailable (a caller that left, context.Canceled, is no outage
// and brings none unless its error matches core.ErrUnavailable too).
func (w *limiter) countErr(err error) (decided bool) {
	if err == nil {
		return true
	}
	typ := errOther
	switch {
	case errors.Is(err, context.Canceled):
		typ, decided = errCanceled, errors.Is(err, core.ErrUnavailable)
	case errors.Is(err, core.ErrUnavailable):
		typ, decided = errUnavailable, true
	case errors.Is(err, core.ErrInvalid):
		typ = errInvalid
	}
	w.errs[typ].get().Inc()
	return decided
}
