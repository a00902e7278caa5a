// Package redis is edgelimit's authoritative store: a core.Limiter whose
// every decision is one atomic Lua script call at Redis (package lua), over
// a goredis.UniversalClient, so a single node, Sentinel and Redis Cluster all
// work. The scripts repeat core's arithmetic exactly, so a Redis decision
// equals the one core's Go math makes for the same history.
//
// # Key layout
//
// By default, one key per identity and limit (see "Bucketed layout" for
// the alternative for the window algorithms):
//
//	prefix ":{" esc(id) "}:" alg ":" max "/" window      e.g. el:{user:42}:s:10/1s
//
// prefix is WithPrefix's (default "el", braces refused). The tail is
// Suffix(limit): alg is one byte per algorithm, "s" sliding window
// ("index:cur:prev", a short string), "f" fixed window ("index:cur"), "l"
// sliding log (a sorted set, one member per admitted request holding its
// weight, requests of one millisecond sharing one, at most Max, and one
// member holding their total; see lua/log.lua), "b" token bucket (the GCRA TAT
// in µs, with ".k" when it has a fraction k/Max of a µs; see
// lua/bucket.lua); max is Limit.Max in decimal and window the window in the largest
// of d, h, m, s dividing it, else in ms ("1s", "90s", "1h", "1500ms").
// esc(id) is the id itself, except that an id beginning with '}' or '\'
// gets one '\' in front. Hence:
//
//   - Injective: the tail holds no '}', so stripping the fixed prefix and
//     everything from the key's last '}' gives esc(id) back, and esc is
//     one-to-one, so distinct identities (any bytes: colons, braces, NUL,
//     invalid UTF-8, up to core.MaxKeyLen) or limits never share a key.
//   - Limits apart: two limiters under one prefix — 10 per second and 1000
//     per hour of one route, or two routes' limits of one window and
//     different Max — keep their own keys, each deciding as it would
//     alone; limiters of one limit (every process enforcing it) share
//     theirs. To count two routes apart under one and the same limit, give
//     them distinct identities or prefixes. Changing a limit's Max or
//     window starts its counts afresh (the old keys expire by their TTLs):
//     during a rolling deploy an identity may pass up to the old and the
//     new limit, for the windows the deploy spans.
//   - One slot per identity: Redis Cluster hashes the text between the first
//     '{' (ours, as the prefix has none) and the next '}'. esc(id) never
//     starts with '}', so that hash tag is never empty and depends on the id
//     alone: every key of one identity, under any limit, lands in one slot
//     (no CROSSSLOT), and distinct identities spread over the cluster.
//
// Every key carries a TTL (PEXPIRE) ending when its state stops mattering —
// sliding: the end of the next window; fixed: the end of the window; log:
// the newest stamp plus the window; bucket: the TAT — plus WithExpirySlack's
// slack (by default the timeout, so a request stamped inside a window that
// runs at Redis late, within the timeout, still finds that window's state
// instead of counting from zero), so an identity that stops calling leaves
// nothing behind. A write never sets it past that lifetime from the
// write's own stamp: one counted in a state its stamp lags (a clock put
// back) does not stretch the key's life by the lag.
//
// # Bucketed layout
//
// WithBuckets(n) with n > 0 keeps the counters of the sliding window
// counter and the fixed window of many identities in one key instead: an
// identity belongs to bucket BucketOf(id, n) (FNV-1a modulo n), and each
// bucket holds one Redis hash per window number j,
//
//	"{" prefix ":" bucket "}:" suffix ":" j      field: the identity, value: its count in window j;
//	                                             field "": "0" in the bucket's newest window, else "1"
//	"{" prefix ":" bucket "}:" suffix ":m"       the bucket's marker: the newest window written
//
// suffix is Suffix(limit) as above ("{el:17}:s:10/1s:m"), so two limits
// under one prefix keep apart buckets, window numbers and markers.
//
// A decision is still one script call (sliding_bucket.lua, fixed_bucket.lua)
// declaring the marker as its key; the window hashes it reads and writes
// share the marker's hash tag, hence its Cluster slot, while distinct
// buckets spread over the slots and masters. The script reads the count of
// the request's window with its flag (one HMGET) and (sliding) the count of
// the window before, adds n to the first when admitted (HINCRBY), and so
// makes core's decision exactly: core's state
// (Index, Cur, Prev) is the identity's newest window holding its field,
// that field and the one of the window before. A request whose window is
// missing or flagged "1" reads the marker; one stamped in a window older
// than the bucket's newest (a clock that went back) searches
// the newer windows, at most BucketHorizon of them, for the identity's
// newest count and is decided there as core decides it; a request stamped
// more than BucketHorizon windows before the bucket's newest window is
// decided in its own window (a bucket mate counted far ahead, by a caller
// whose clock ran ahead, moves that window for every identity of the
// bucket until real time reaches it). A
// window hash expires as a whole when no request can be stamped inside
// the state it holds any more — sliding: the end of the next window; fixed:
// the end of the window; plus WithExpirySlack's slack, as above — its TTL
// set from the stamp of the request creating it (a later stamp reaching
// Redis as promptly would give the same expiry); the marker outlives every
// window hash of its bucket. Reset deletes the identity's fields from the
// marker's window and the BucketHorizon + 1 windows before it, and from
// the windows within BucketHorizon of the window of the limiter's clock
// (Redis' under WithServerTime), so it also clears the counts of callers
// whose clocks lie within BucketHorizon windows of the resetting one's
// when a bucket mate moved the marker far ahead (one script call). A peek
// writes nothing. The sliding log stays a sorted set per
// identity (one member per admitted request) and the token bucket a TAT per
// identity: a TAT has no window after which every identity's state ends
// together, so a bucket of TATs would never expire as a whole while any of
// its identities calls, and Redis 7.0 has no per-field TTL (HEXPIRE is
// 7.4+) to drop the others.
//
// Sizing: a hash stays listpack-encoded (compact) up to
// hash-max-listpack-entries fields (its identities and the flag) — 512
// by default (Redis 7.0.15 compiled in, and the redis.conf Debian 12's
// package installs), lower where a deployment sets it so — and an
// identity longer than hash-max-listpack-value (64 bytes) turns its
// bucket's hash into a hashtable. Choose n as the identities active in
// one window divided by 80: buckets then hold 80 on average and, FNV
// spreading them about evenly, the fullest of thousands stays under 128,
// within a server configured down to 128 (100,000 identities "user:N"
// over 1,250 buckets: 40 to 116 each). Fewer identities per
// bucket share each key's overhead among fewer; more make hashtables.
// used_memory per identity at 100,000 identities (bench/cmd/layoutbench
// -memory-only -buckets N): 43.4 B over 1,250 buckets, 55.4 B over 4,096,
// 105.3 B over 16,384; at 1,000,000 (-identities 1000000 -listpack-entries
// 512): 129.8 B over 1,024 buckets (977 each: hashtables), 40.5 B over
// 4,096 (244 each, listpack under 512), 42.9 B over 12,500; one key per
// identity 165.8 and 160.9 B. Every process sharing a
// prefix must use the same n; changing n, like switching layouts, is a
// migration (below).
//
// Measured by bench/cmd/layoutbench (in bench/: go run ./cmd/layoutbench;
// Redis 7.0.15, hash-max-listpack-entries 128, buckets = identities / 80,
// rounds of 300 ms interleaved on a loaded 2-core machine). An admitted
// decision runs 3 commands in the script against 2. 100,000 identities, 41
// rounds (load average 7–10): used_memory per identity 165.8 B with one key
// per identity, 44.4 B bucketed; Redis CPU per decision 1.01, 1.17 and
// 1.21 times the per-identity layout's with 1, 8 and 64 callers; decisions
// per second 0.92, 0.91 and 0.88 times. 1,000,000 identities (-identities
// 1000000 -rounds 11, load 14–18): 160.9 B against 40.6 B; CPU 1.00, 1.20
// and 1.17 times; decisions per second 1.14, 0.94 and 0.87 times. The
// layout is therefore not the default (DefaultBuckets is 0): it meets 64 B
// per identity at a quarter of the memory, but costs Redis more per
// decision and passes fewer decisions per second with concurrent callers.
// Take it where Redis memory binds.
//
// The layouts do not read each other's keys. A rolling deploy that turns
// WithBuckets on (or changes n) therefore counts an identity apart in each
// layout while processes of both decide for it: up to its limit in each,
// for the windows the deploy spans; the old keys then expire by their
// TTLs (two windows plus slack at most). Deploy the switch where that
// over-admission is acceptable, or stop every process of the old layout
// before the first of the new one decides.
//
// # Failure
//
// Bad input (core.ValidateKey, Limit.CheckWeight) returns a core error
// matching core.ErrInvalid and sends nothing. When Redis cannot answer
// (down, timed out after WithTimeout, any error reply but a redirection,
// below), calls return a *core.UnavailableError (errors.Is
// core.ErrUnavailable) together with the fail-mode decision: denied with
// Source core.SourceFailClosed by default, allowed with
// core.SourceFailOpen under WithFailOpen. Scripts are sent by
// EVALSHA; a NOSCRIPT reply (SCRIPT FLUSH, restart) costs one EVAL retry.
// A call whose reply is lost after Redis ran it (the connection closed in
// between) is sent again by go-redis itself (its MaxRetries, 3 by default,
// within the call's timeout; a pipeline, WithPipelining's or AllowEach's,
// is sent again whole), and the script counts the request again: its
// units of the identity's quota lost per retry, never one past the limit.
// A client built with MaxRetries -1 sends each call once; such a call
// gets the fail-mode decision, its unit counted (as any call Redis ran
// after its caller stopped waiting).
// One error reply is no outage: a Redis Cluster node answering MOVED or ASK
// to a client that is not a Redis Cluster client (a plain client pointed
// at one node of a cluster) is a configuration error, returned as a
// *RedirectError (errors.Is core.ErrInvalid and ErrNotClusterClient) with no
// decision, whatever the fail mode: fail-open would otherwise admit, without
// limit, every identity whose slot another node serves. The Limiter's
// CheckClient finds that misconfiguration at startup (New sends nothing to
// Redis) by what the client does, not its type: it reads, through the
// client, keys of its own prefix and layout in every master's slots (an
// ACL user granted the limiter's keys may read them), and refuses a client
// a node redirected; so a type of the user's wrapping a
// *goredis.ClusterClient passes it (see RedirectError for
// how such a wrapper's calls are told apart).
//
// # Many decisions at once
//
// AllowEach decides a slice of asks in one pipeline, as AllowN would one
// by one in the slice's order, for a caller that holds many decisions at
// once (a replay of recorded traffic, pop-sim's pure-Redis mode); a bad
// ask anywhere fails the whole slice before anything is sent. A caller
// that needs a key's asks decided in order gives each key at most one ask
// per call: after a lost script, the calls refused NOSCRIPT run again
// after the rest, and any other client (another process's first call
// after the loss) may load it while the pipeline runs.
package redis
