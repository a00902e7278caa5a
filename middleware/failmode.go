package middleware

// FailMode says whether the middleware overrides the decision a limiter
// makes when its store fails. The zero value is FailAsLimiter.
//
// A limiter whose store is down still decides (core.Limiter returns an error
// matching core.ErrUnavailable together with the decision its own fail mode
// prescribes: a budget limiter's counted decision on its view, a Redis limiter's
// fail-open admission or fail-closed denial). FailAsLimiter keeps that
// decision; FailOpen and FailClosed override it. When no decision arrives at
// all (the limiter ran past WithTimeout, or failed with an error not
// matching core.ErrUnavailable), there is nothing to keep: the request is
// refused with 503 unless the mode is FailOpen.
type FailMode uint8

const (
	// FailAsLimiter keeps the limiter's decision: allowed, the request is
	// served with its RateLimit field; denied by a limiter that counted
	// (for instance a budget limiter's view over the limit), 429;
	// denied because its store is down (core.SourceFailClosed), 503 with
	// the limiter's Retry-After, unless another limit denies from counted
	// state (429), with or without the peeks. No decision: 503.
	FailAsLimiter FailMode = iota
	// FailOpen serves every request whose decision met a store failure,
	// even one the limiter denied for it (without a RateLimit field, since
	// the decision was overridden), and every request with no decision.
	// Denials made from counted state, with no failure, still get 429,
	// and so do those of a limit whose store is up while another limit's
	// is down: an overridden denial does not stop the other limits from
	// being asked, nor does a limit that gives no decision (an error with
	// none, but a client that hung up, or a call still running when the
	// limiters' context expires, then left behind; see the package doc,
	// "Store failure").
	FailOpen
	// FailClosed answers 503 Service Unavailable to every request whose
	// decision met a store failure, even one the limiter admitted (and
	// counted, as a budget limiter's decision on its view does), and to every
	// request with no decision.
	FailClosed
)

// String returns "as-limiter", "fail-open" or "fail-closed".
func (m FailMode) String() string {
	switch m {
	case FailOpen:
		return "fail-open"
	case FailClosed:
		return "fail-closed"
	}
	return "as-limiter"
}
