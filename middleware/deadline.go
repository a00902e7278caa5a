package middleware

// DeadlineBound is implemented by a limiter that can say whether every
// wait of its decisions ends by their context's deadline, and that never
// waits for a decision it makes without its store (a budget limiter whose
// go-redis client has ContextTimeoutEnabled; see budget.Limiter.DeadlineBound).
// When every limit's limiter says true, the middleware calls them on the
// request's goroutine, as under WithTrustedDeadline: WithTimeout's deadline
// then bounds only their waits on their stores, and a decision made from
// local state is kept however late a stalled machine runs it, instead of
// being abandoned at the deadline (503). A limiter that does not implement
// it, or says false, keeps the guard (see the package doc).
type DeadlineBound interface {
	DeadlineBound() bool
}

// allBound reports whether every limit's limiter is DeadlineBound.
func allBound(limits []namedLimit) bool {
	for _, l := range limits {
		b, ok := l.limiter.(DeadlineBound)
		if !ok || !b.DeadlineBound() {
			return false
		}
	}
	return len(limits) > 0
}
