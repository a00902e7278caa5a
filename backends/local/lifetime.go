package local

import "github.com/edgelimit/edgelimit/core"

// staleFunc reports whether a request stamped now (ms) lies so far before
// the stored state v that the Redis backend would no longer hold v's key;
// the store then decides as for an identity not held.
//
// A state written by a clock that was ahead — a VM resumed with a wrong
// clock, a bad NTP source — and then put right would hold every later
// request: core counts a request stamped before its state in the state,
// adding the lag to RetryAfter and ResetAfter, and the idle sweep keeps a
// state whose ResetAfter has not run out, so the identity would be denied
// for as long as the clock had been ahead. The Redis backend forgets such
// a key when its TTL of real time runs out: at most the state's longest
// life (sliding window: two windows; fixed window and log: one window;
// bucket: Max emission intervals) plus its expiry slack (by default the
// timeout, 1 s) after it was written. The local store has no real time,
// only stamps, so it treats a state as absent for a request stamped more
// than that lifetime (with idleGraceMillis, 1 s, as the slack) before the
// earliest stamp the state's newest write can have carried on time — the
// start of its window, its newest stamp, its TAT less the burst tolerance.
// A request stamped a little before the state (another goroutine, a small
// clock correction) is still counted in it, exactly as core counts it.
type staleFunc[V any] func(v *V, now int64) bool

// lagsPast reports whether now lies more than reach before start, without
// overflow for any stamps.
func lagsPast(start, now, reach int64) bool {
	return start > now && uint64(start)-uint64(now) > uint64(reach)
}

// staleWindow is stale for the sliding window (span two windows) and the
// fixed window (span one window): lag behind the start of the stored
// window beyond span plus the grace.
func staleWindow(l core.Limit, windows int64) staleFunc[core.WindowState] {
	w := l.WindowMillis()
	reach := windows*w + idleGraceMillis
	return func(s *core.WindowState, now int64) bool { return lagsPast(s.Index*w, now, reach) }
}

// staleLog is stale for the log: lag behind its newest stamp beyond one
// window plus the grace. An empty log is never stale.
func staleLog(l core.Limit) staleFunc[core.LogState] {
	reach := l.WindowMillis() + idleGraceMillis
	return func(s *core.LogState, now int64) bool {
		n := len(s.Entries)
		return n > 0 && lagsPast(s.Entries[n-1].At, now, reach)
	}
}

// staleBucket is stale for the token bucket, in µs: lag behind TAT − τ
// (τ = Max × T, the burst tolerance; a write at now leaves TAT at most τ
// after now) beyond τ rounded up to whole ms, as the Redis TTL, plus the
// grace.
func staleBucket(l core.Limit) staleFunc[core.BucketState] {
	tau := core.BucketInterval(l) * l.Max
	reach := ((tau+999)/1000 + idleGraceMillis) * 1000
	return func(s *core.BucketState, now int64) bool { return lagsPast(s.TAT-tau, now*1000, reach) }
}
