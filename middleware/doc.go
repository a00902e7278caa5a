// Package middleware is edgelimit's net/http middleware: it wraps any
// http.Handler, derives an identity key from each request, asks one or more
// named core.Limiters (for instance "per-second" and "per-day") whether the
// request may pass, and answers 429 Too Many Requests when one of them says
// no.
//
// # Keys
//
// A KeyFunc turns a request into the identity key. The built-ins are
// RemoteAddrKey (the direct peer's IP, the default), TrustedClientIP (the
// client IP from X-Forwarded-For or Forwarded, believed only when the direct
// peer is a configured trusted proxy, walking the chain from the right and
// skipping trusted hops, so a client cannot choose its own key) and
// HeaderKey (a header such as an API key). A key that is empty or longer than
// core.MaxKeyLen is a bad key: the request gets 400 Bad Request, or is
// counted under WithFallbackKey's key when one is set.
//
// # Several limits
//
// Every limit must allow. A request is weighed as one unit. To keep a denied
// request from spending quota on the limits that did allow it, the
// middleware first peeks (core.Limiter.Peek, which counts nothing) at every
// limit but the first and denies at once if one of them would deny; then it
// calls AllowN on each limit in order and stops at the first denial. Only a
// race between the peek and the AllowN (another request of the same key
// spending the last unit in between) can still spend a unit on the limits
// before the one that denied. WithPeekFirst(false) drops the peeks: one call
// per limit instead of up to two, at the price of spending on earlier limits
// whenever a later one denies.
//
// Each limit must keep its own counters: two limiters of backends/redis with
// the same prefix and algorithm share one key per identity, so give each
// its own WithPrefix.
//
// # Response headers
//
// Every response carries the fields of draft-ietf-httpapi-ratelimit-headers-10:
//
//	RateLimit-Policy: "per-second";q=10;w=1, "per-day";q=10000;w=86400
//	RateLimit: "per-second";r=7;t=1
//
// RateLimit-Policy has one item per limit, in the order given (w, the window
// in seconds, is left out when the window is not a whole number of seconds,
// since the draft has no sub-second windows). RateLimit names the most
// restrictive limit: when the request passes, the one with the fewest units
// remaining (ties: the longest reset), with r = Decision.Remaining and t =
// Decision.ResetAfter in seconds rounded up; when it is denied, the denying
// limit with the longest wait, with r = 0 and t = Retry-After. A denied
// response also carries Retry-After: Decision.RetryAfter in seconds, rounded
// up, at least 1. WithLegacyHeaders adds X-RateLimit-Limit,
// X-RateLimit-Remaining and X-RateLimit-Reset (the same limit; Reset in
// seconds from now, not a Unix time).
//
// # Store failure
//
// Every decision runs under a deadline (WithTimeout, default
// DefaultTimeout): the limiters get a context that expires then, and the
// middleware stops waiting at that moment even if a limiter ignores its
// context (as a go-redis client does unless ContextTimeoutEnabled is set).
// That guard costs a goroutine per request; WithTrustedDeadline drops it
// for limiters known to honour their context. A limiter error or the deadline is a store failure: under
// FailOpen (the default) the request is served without a RateLimit field,
// under FailClosed it gets 503 Service Unavailable. The error goes to
// WithErrorHandler's function. The middleware never panics on a limiter
// error.
package middleware
