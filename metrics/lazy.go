package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// lazyCounter is one series of vec, created at its first increment and
// then kept, so a series that never moves is never exported.
type lazyCounter struct {
	vec    *prometheus.CounterVec
	labels []string
	c      atomic.Pointer[prometheus.Counter]
}

// get returns the series, creating it on first use. Two first uses at once
// both ask vec, which returns the same series.
func (l *lazyCounter) get() prometheus.Counter {
	if c := l.c.Load(); c != nil {
		return *c
	}
	c := l.vec.WithLabelValues(l.labels...)
	l.c.Store(&c)
	return c
}
