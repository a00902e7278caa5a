package middleware

// DeadlineBound is implemented by a limiter that can say whether every
// wait of its decisions ends by their context's deadline, and that never
// waits for a decision it makes without its store (a budget limiter or a
// Redis limiter whose go-redis client has ContextTimeoutEnabled, a Redis
// Cluster client DisableRoutingPolicies too, a Redis limiter
// WithPipelining, a local limiter; see
// budget.Limiter.DeadlineBound and redis.Limiter.DeadlineBound).
// When every limit's limiter says true, the middleware calls them on the
// request's goroutine, as under WithTrustedDeadline: WithTimeout's deadline
// then bounds only their waits on their stores, and a decision made from
// local state is kept however late a stalled machine runs it, instead of
// being abandoned at the deadline (503). A limiter that does not implement
// it, or says false, keeps the guard (see the package doc). Under
// FailOpen, a DeadlineBound limiter's decision is waited for even when
// some other limiter is not DeadlineBound (see FailOpen).
type DeadlineBound interface {
	DeadlineBound() bool
}

// bounds reports, limit by limit, whether its limiter is DeadlineBound.
func bounds(limits []namedLimit) []bool {
	bs := make([]bool, len(limits))
	for i, l := range limits {
		b, ok := l.limiter.(DeadlineBound)
		bs[i] = ok && b.DeadlineBound()
	}
	return bs
}

// all reports whether bs holds true only, and at least one.
func all(bs []bool) bool {
	for _, b := range bs {
		if !b {
			return false
		}
	}
	return len(bs) > 0
}
