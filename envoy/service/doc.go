// Package service implements Envoy's rate limit service,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit, on edgelimit's
// limiters, with rules in envoyproxy/ratelimit's YAML format (package config).
//
// For each descriptor of a request, in order, the service finds its rule
// (config.Domain.Match) and decides hits_addend units (the descriptor's, else
// the request's, whose 0 means 1; the descriptor's set to 0 checks without
// counting, as envoyproxy/ratelimit does: OK while a unit is left, its
// limit_remaining the quota left; with the quota exactly spent
// envoyproxy/ratelimit says OK, as it denies only a count past the limit,
// but OVER_LIMIT once a hit was denied, as its count takes denied hits
// too; this service, which counts no denied hit, cannot tell the two
// apart and says OVER_LIMIT) against the rule's limit, keyed by the domain,
// the descriptor's entries and the window, so every distinct value has its
// own counter. The request is OVER_LIMIT when any descriptor is. A status per
// descriptor, in the request's order:
//
//   - no rule, or the rule's limit replaced by another matched rule
//     (replaces): OK, nothing else set, nothing counted;
//   - unlimited: OK, limit_remaining 2^32−1, nothing counted;
//   - limited: OK or OVER_LIMIT, current_limit (name, requests_per_unit,
//     unit, unit_multiplier when above 1), limit_remaining and
//     duration_until_reset: when allowed, until quota starts to come
//     back, the earliest a client that spent its last unit passes again
//     (a fixed window's end; a sliding window's: 1 ms into the next
//     window, when the current count starts to fade, at most the window,
//     the middleware's RateLimit t; a token bucket's: until it is full);
//     when over, until this descriptor would pass again if nothing else is
//     spent; for hits that never pass (hits_addend above the limit,
//     requests_per_unit 0), the window, as envoyproxy/ratelimit reports its
//     window's reset for every denial, though no wait lets them through:
//     such a request gets no Retry-After (Options.Headers);
//   - a shadow_mode rule over its limit: OK with limit_remaining 0, counted
//     in metrics as shadow; Options.ShadowMode does that for every rule;
//   - a quota_mode rule over its limit: OVER_LIMIT, its index listed in
//     the response's dynamic_metadata quotaModeViolations, but the request
//     is OVER_LIMIT for it only when every quota_mode descriptor of the
//     request is over its limit (a request passes while one of its quotas
//     has room), as envoyproxy/ratelimit decides.
//
// A denied descriptor counts nothing (but a charge rule's, below);
// descriptors decided before it keep what they counted, and those after it
// (but charge rules') are checked without counting
// (hits_addend that does not fit in what is left is OVER_LIMIT; its wait
// is the time the hits fit: the local, redis and budget backends peek at
// that many units, core.PeekerN; a backend's limiter without PeekN is
// peeked at one unit, its wait the time quota starts to come back: early
// for a sliding window),
// so a client over its own limit does not spend a limit it shares with
// others. A request quota_mode denies (every quota spent) is denied from
// its last quota_mode descriptor on, the same way. Under
// Options.ShadowMode the request passes and
// every descriptor counts (envoyproxy/ratelimit counts every descriptor
// of every request). hits_addend above the limit is OVER_LIMIT and counts
// nothing (a charge rule's counts what is left). requests_per_unit 0
// denies every request.
//
// Costs sent after the response (Envoy's apply_on_stream_done: the filter
// sends a descriptor's hits_addend, the tokens a response used, say, once
// the stream is done, and ignores the answer) come as any other request:
// nothing in a RateLimitRequest tells them apart, so the rule says so. A
// rule with charge (config.Rule.Charge) takes its hits as costs already
// incurred: hits that do not fit, or exceed the limit, count what is left
// of the quota (the quota left that the denial reports, tried again with
// less when a count of it is denied, at most eight calls; on the budget
// backend, whose free credit keeps a few units an instance back, those
// may stay uncounted), so the next requests are denied until quota comes
// back; the status
// is OVER_LIMIT, limit_remaining what is left after the charge,
// duration_until_reset the time the hits would fit (the window when they
// exceed the limit); and a denial earlier in the request does not keep
// them from being counted. Without charge, a cost that does not fit counts
// nothing, so a client whose responses cost more than its quota left
// consumes without bound. envoyproxy/ratelimit counts every hit past the
// limit, but its excess too only lasts until its fixed window ends: with
// algorithm fixed, a charge denies the next requests as long as it does;
// with a sliding window or a token bucket, which would carry the excess
// further, for less time (the backends count nothing past the limit). A
// charge rule's request-time check (hits_addend 0) is decided as any
// other, and a request-time count on it that does not fit spends what is
// left too.
//
// A descriptor's own limit override (RateLimitDescriptor.limit, set by
// Envoy's rate limit actions) replaces its rule's limit, or limits it when no
// rule matches, as envoyproxy/ratelimit does; like envoyproxy/ratelimit, it
// is enforced without the rule's shadow_mode or quota_mode, and the rule's
// replaces do not apply; the rule's charge does (it says how the hits
// come, not what limits them). Unlike envoyproxy/ratelimit, which limits nothing
// of a domain its configuration lacks, this service enforces an override
// in such a domain too: the limit came with the request.
//
// Bad requests get a gRPC InvalidArgument error naming the problem and
// count nothing: an empty domain, no descriptors, a descriptor without
// entries or with an empty key, a descriptor whose domain, keys, values and
// window together exceed core.MaxKeyLen bytes, is_negative_hits (refilling is
// not supported), a limit override that cannot be enforced (its unit, or
// its window past core.MaxWindow, 100 years), or more than MaxDescriptors
// descriptors.
//
// Store failure: a backend that cannot reach Redis decides by its fail mode
// (RedisOptions.FailOpen, BudgetOptions.FailClosed); that decision is
// answered as any other (OK or OVER_LIMIT), so Envoy's failure_mode_deny,
// which applies only when this service does not answer, is not involved;
// a fail-open OK, which counted nothing, carries no current_limit nor
// duration_until_reset, so Envoy's X-RateLimit-* headers, built from the
// statuses that name a limit, do not report that quota spent.
// A call Envoy gave up on (its context cancelled, as when its filter's
// timeout passes) before the backend answered is no outage: gRPC Canceled,
// counted as requests_total{code="canceled"} (the redis and budget
// backends send nothing for it when the cancellation came first, and the
// budget backend counts nothing of it).
package service
