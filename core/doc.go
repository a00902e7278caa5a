// Package core holds the types every part of edgelimit speaks — Limit,
// Decision, Limiter, Clock, the key rules and the typed errors — and the
// rate-limiting algorithms as pure math on counters: the sliding window
// counter (Cloudflare's, the default), the fixed window, the exact sliding
// log and the token bucket (as GCRA).
//
// core imports nothing of the project and talks to no server: the backends
// (backends/local, backends/redis) store the state, and the Redis Lua scripts
// (package lua) repeat exactly the same arithmetic, so every backend gives the
// same answer for the same history. The conformance suite checks that.
//
// Time is always explicit. The math takes "now" as integer milliseconds since
// the Unix epoch (see Millis); limiters take a time.Time and have a Clock
// option, so a simulator drives the very code users run.
package core
