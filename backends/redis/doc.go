// Package redis is edgelimit's authoritative store: a core.Limiter whose
// every decision is one atomic Lua script call at Redis (package lua), over
// a goredis.UniversalClient, so a single node, Sentinel and Redis Cluster all
// work. The scripts repeat core's arithmetic exactly, so a Redis decision
// equals the one core's Go math makes for the same history.
//
// # Key layout
//
// One key per identity and algorithm:
//
//	prefix ":{" esc(id) "}:" suffix
//
// prefix is WithPrefix's (default "el", braces refused); suffix is one byte
// per algorithm: "s" sliding window ("index:cur:prev", a short string), "f"
// fixed window ("index:cur"), "l" sliding log (a sorted set, one member per
// admitted unit, at most Max), "b" token bucket (the GCRA TAT in µs). esc(id)
// is the id itself, except that an id beginning with '}' or '\' gets one '\'
// in front. Hence:
//
//   - Injective: stripping the fixed prefix and the fixed three-byte tail
//     gives esc(id) back, and esc is one-to-one, so distinct identities (any
//     bytes: colons, braces, NUL, invalid UTF-8, up to core.MaxKeyLen) or
//     algorithms never share a key.
//   - One slot per identity: Redis Cluster hashes the text between the first
//     '{' (ours, as the prefix has none) and the next '}'. esc(id) never
//     starts with '}', so that hash tag is never empty and depends on the id
//     alone: every key of one identity lands in one slot (no CROSSSLOT), and
//     distinct identities spread over the cluster.
//
// Every key carries a TTL (PEXPIRE) ending when its state stops mattering —
// sliding: the end of the next window; fixed: the end of the window; log:
// the newest stamp plus the window; bucket: the TAT — plus WithExpirySlack's
// slack (by default the timeout, so a request stamped inside a window that
// runs at Redis late, within the timeout, still finds that window's state
// instead of counting from zero), so an identity that stops calling leaves
// nothing behind.
//
// # Failure
//
// Bad input (core.ValidateKey, Limit.CheckWeight) returns a core error
// matching core.ErrInvalid and sends nothing. When Redis cannot answer (down,
// timed out after WithTimeout, any error reply), calls return a
// *core.UnavailableError (errors.Is core.ErrUnavailable) together with the
// fail-mode decision: denied with Source core.SourceFailClosed by default,
// allowed with core.SourceFailOpen under WithFailOpen. Scripts are sent by
// EVALSHA; a NOSCRIPT reply (SCRIPT FLUSH, restart) costs one EVAL retry.
//
// # Many decisions at once
//
// AllowEach decides a slice of asks in one pipeline, as AllowN would one
// by one in the slice's order, for a caller that holds many decisions at
// once (a replay of recorded traffic, pop-sim's pure-Redis mode); a bad
// ask anywhere fails the whole slice before anything is sent. Callers
// running AllowEach concurrently give each key at most one ask per call:
// after a lost script, the calls refused NOSCRIPT run again after the rest.
package redis
