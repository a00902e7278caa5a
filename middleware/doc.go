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
// HeaderKey (a header such as an API key; with the header on several lines
// the first line wins). The IP keys take an IPv6 address by its /64
// (IPv6Prefix: one subscriber holds a /64 or more and picks addresses in
// it freely), an IPv4 address whole. Keys go verbatim into the limiter's store (Redis key
// names) and the budget limiter's gossip: wrap a secret in HashedKey, which keeps
// the first 128 bits of its SHA-256 in hex. A key that is empty or longer
// than core.MaxKeyLen is a bad key: the request is answered by
// WithBadKeyHandler's function (default DefaultBadKey: 400 Bad Request,
// with a message saying whether the key was missing or too long; an API
// may answer 401 to a missing key there), or is counted under
// WithFallbackKey's key when one is set.
//
// # Several limits
//
// Every limit must allow. A request is weighed as one unit. To keep a denied
// request from spending quota on the limits that did allow it, the
// middleware first peeks (core.Limiter.Peek, which counts nothing) at every
// limit but the first and denies at once if one of them would deny; then it
// calls AllowN on each limit in order and stops at the first denial (under
// FailOpen, not at a denial made blind with its store down, which FailOpen
// overrides: the other limits are still asked and still count; under
// FailAsLimiter, a denial made blind hides no denial from counted state:
// the limits not asked yet are then peeked at, the first one too, and one
// over its limit makes the answer 429, in any order of the limits, with
// the peeks or without; see "Store failure"). Only a
// race between the peek and the AllowN (another request of the same key
// spending the last unit in between) can still spend a unit on the limits
// before the one that denied. WithPeekFirst(false) drops the peeks: one call
// per limit instead of up to two, at the price of spending on earlier limits
// whenever a later one denies. A request denied on a peek makes no AllowN:
// package metrics' Wrap counts it in peeks_total, not decisions_total. A
// peek of a budget limiter (sync/budget) is a Redis round trip unless its
// deny cache answers, even where its grants or free credit would admit
// the request without one (its Stats count no peeks): put a budget limit
// first, or use WithPeekFirst(false), to keep requests off Redis.
//
// Each limit must keep its own counters. Limiters of backends/redis do
// under one prefix: their keys name the limit (algorithm, Max, window), so
// 10 per second and 1000 per hour of one route share nothing; two limits
// of one and the same policy, and two budget limiters (sync/budget) of one
// Namespace, do share, so give those their own prefix or Namespace.
//
// # Response headers
//
// Every response carries the fields of draft-ietf-httpapi-ratelimit-headers-12
// (checked against its field syntax: RateLimit-Policy a List of String items
// with q and w, RateLimit a List of String items with r and t, all
// non-negative Integers):
//
//	RateLimit-Policy: "per-second";q=10;w=1, "per-day";q=10000;w=86400
//	RateLimit: "per-second";r=7;t=1
//
// RateLimit-Policy has one item per limit, in the order given (w, the window
// in seconds, is left out when the window is not a whole number of seconds,
// since the draft has no sub-second windows). RateLimit names the most
// restrictive limit: when the request passes, the one with the fewest units
// remaining (ties: the longest reset), with r = Decision.Remaining and t the
// draft's "seconds until additional quota is made available", rounded up,
// never more than the window: Decision.ResetAfter, except for a sliding
// window, whose ResetAfter (all counts gone) runs up to 2w while the
// current window's count starts to fade 1 ms into the next window, so t is
// the time to that point; a request stamped behind its state (its clock
// behind the one that wrote it) is told the window. t is when more quota
// has come back at the latest: a sliding window's previous window, while
// its weight fades, and a token bucket's refill give quota back sooner.
// When the request is denied, the denying limit with the longest wait,
// with r = 0 and t = Retry-After. A denied response also carries
// Retry-After: Decision.RetryAfter in seconds, rounded up, at least 1.
// WithLegacyHeaders adds X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset (the same limit; Reset is t, in seconds from now, not a
// Unix time).
//
// # Store failure
//
// This is the one place the middleware's fail modes are described. The
// limiter's decision stands unless the middleware is told to override it.
// A limiter whose store is down still decides: core.Limiter returns an
// error matching core.ErrUnavailable together with the decision its own
// fail mode prescribes (a budget limiter decides on its view and counts,
// or denies with core.SourceFailClosed when its Config.FailClosed is set,
// and says so while Redis stays down, call or not; a Redis
// limiter denies, or admits with core.SourceFailOpen under WithFailOpen).
// WithFailMode chooses what the middleware does with that:
//
//	store down, the limiter   FailAsLimiter (default)   FailOpen          FailClosed
//	admitted (counted)        served, RateLimit field   served, field     503
//	admitted, fail-open       served, no field          served, no field  503
//	denied (counted)          429, fields               429, fields       503
//	denied, fail-closed       503, Retry-After          served, no field  503
//	gave no decision (*)      503                       served, no field  503
//
// (*) the deadline passed first, or the error did not match
// core.ErrUnavailable (such an error carries no decision): among them a
// client that hung up before a Redis or budget limiter answered (an error
// matching context.Canceled, reported to WithErrorHandler as no store
// failure; the response goes to nobody). Under FailOpen, with several
// limits, the others still decide (below). Denials made with no error (a
// budget limiter's deny cache with Redis up) are 429 in every mode.
//
// So a FailClosed budget limiter behind the default middleware enforces its
// limit during an outage (503 with Retry-After, never more than the limit
// served), and one deciding on its view keeps counting and answering 429
// once its view's count is over. 503 means "the limiter could not decide", 429 "over
// the limit". A fail-mode decision (core.SourceFailOpen,
// core.SourceFailClosed) counted nothing and says nothing about the quota,
// so it gets no RateLimit field; with several limits a counted decision is
// the one reported, and a counted denial the answer: under FailAsLimiter
// an identity over a limit whose store is up gets 429 even though another
// limit's store is down (answering with an error, not hanging past the
// deadline), with the peeks as without them; a peek that hangs past the
// deadline leaves the fail-closed denial standing: 503 with its
// Retry-After, as when the peek answers. Under FailOpen a fail-closed
// denial (peek or AllowN) does not end the decision: the other limits are
// still asked, so one whose store is up keeps counting, and denies with
// 429, while another's store is down. Nor does a limit that gives no decision: an error with
// none (but a client that hung up), or a call still running when the
// limiters' context expires (below), of a limiter that ignores it (a
// go-redis client without ContextTimeoutEnabled on a Redis that does not
// answer); that call is left behind, unless the limiter is DeadlineBound,
// and the limits not asked yet are asked then, with that context expired
// (a limiter honouring it answers at once, from local state or blind), in
// what is left of the deadline. At the deadline a DeadlineBound limiter's
// decision is still waited for and kept; any other limiter still deciding
// then, or not asked yet, gives no decision.
//
// Every decision runs under a deadline (WithTimeout, default
// DefaultTimeout): the limiters get a context that expires a little before
// it (a tenth of the timeout, at most 10 ms), so a limiter that honours its
// context (a budget limiter or a Redis limiter whose go-redis client has
// ContextTimeoutEnabled) gives up on its store and its fail-mode decision
// still arrives; the middleware stops waiting at the deadline even if a
// limiter ignores its context. Only then is there no decision; if the
// decision is there when the deadline is seen (both ready after a stall of
// the machine), it is kept (under FailOpen the limits that did decide
// stand, see above). That guard costs a goroutine per request (under
// FailOpen, one more per call left behind), and
// a stall of the machine longer than the deadline can still beat a local
// decision to it; WithTrustedDeadline drops it for limiters known to honour
// their context, and so does every limiter being DeadlineBound (a local
// limiter, a budget or Redis limiter whose client has
// ContextTimeoutEnabled, a cluster client's DisableRoutingPolicies too,
// or a Redis limiter WithPipelining;
// metrics.Wrap keeps the method in sight): the deadline then bounds
// only the waits on the store, and a decision from local state never fails
// for lack of time. Every limiter error and timeout goes to
// WithErrorHandler's function. The middleware never panics on a limiter
// error.
package middleware
