package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/prometheus/client_golang/prometheus"
)

// sources is every core.Source a decision can carry, in order.
var sources = []core.Source{core.SourceLocal, core.SourceRedis, core.SourceCachedDeny,
	core.SourceFailOpen, core.SourceFailClosed}

// limiter is the decorator Wrap returns. Counters are resolved once, so a
// decision costs two clock reads, one histogram observation and one
// counter increment.
type limiter struct {
	next    core.Limiter
	allowed []prometheus.Counter // by Source
	denied  []prometheus.Counter // by Source
	errs    map[core.Source]prometheus.Counter
	errNone prometheus.Counter
	dur     prometheus.Observer
}

var _ core.Limiter = (*limiter)(nil)

// Wrap returns a core.Limiter that forwards every call to l and counts the
// decisions of AllowN and Allow under limiter=name (Peek and Reset are
// forwarded uncounted). Decisions and errors are returned unchanged. Wrap
// the same name twice and both feed the same series. All the series of name
// exist from the start with value 0, so rate() and alerts see them before
// the first decision.
func (c *Collector) Wrap(name string, l core.Limiter) core.Limiter {
	w := &limiter{next: l, errs: map[core.Source]prometheus.Counter{},
		dur: c.decisionDur.WithLabelValues(name)}
	for _, s := range sources {
		w.allowed = append(w.allowed, c.decisions.WithLabelValues(name, "allowed", s.String()))
		w.denied = append(w.denied, c.decisions.WithLabelValues(name, "denied", s.String()))
	}
	for _, s := range []core.Source{core.SourceFailOpen, core.SourceFailClosed} {
		w.errs[s] = c.decisions.WithLabelValues(name, "error", s.String())
	}
	w.errNone = c.decisions.WithLabelValues(name, "error", "none")
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

// Peek forwards to the wrapped limiter.
func (w *limiter) Peek(ctx context.Context, key string, now time.Time) (core.Decision, error) {
	return w.next.Peek(ctx, key, now)
}

// Reset forwards to the wrapped limiter.
func (w *limiter) Reset(ctx context.Context, key string) error { return w.next.Reset(ctx, key) }

// Limit returns the wrapped limiter's policy.
func (w *limiter) Limit() core.Limit { return w.next.Limit() }

func (w *limiter) count(start time.Time, d core.Decision, err error) {
	w.dur.Observe(time.Since(start).Seconds())
	w.counter(d, err).Inc()
}

func (w *limiter) counter(d core.Decision, err error) prometheus.Counter {
	switch {
	case err != nil:
		if c, ok := w.errs[d.Source]; ok && errors.Is(err, core.ErrUnavailable) {
			return c
		}
		return w.errNone
	case int(d.Source) >= len(sources):
		return w.errNone
	case d.Allowed:
		return w.allowed[d.Source]
	}
	return w.denied[d.Source]
}
