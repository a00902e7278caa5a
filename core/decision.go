package core

import "time"

// Source says where a decision was made.
type Source uint8

const (
	// SourceLocal: decided from in-process state with no network call.
	SourceLocal Source = iota
	// SourceRedis: decided atomically at Redis, the authoritative store.
	SourceRedis
	// SourceCachedDeny: denied from a cached over-limit state, no network call.
	SourceCachedDeny
	// SourceFailOpen: the store was unreachable and the limiter was
	// configured to allow; the decision counts nothing.
	SourceFailOpen
	// SourceFailClosed: the store was unreachable and the limiter was
	// configured to deny.
	SourceFailClosed
)

var sourceNames = [...]string{"local", "redis", "cached-deny", "fail-open", "fail-closed"}

// String returns "local", "redis", "cached-deny", "fail-open" or "fail-closed".
func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "unknown"
}

// Decision is the answer to one request. The zero value denies.
type Decision struct {
	// Allowed reports whether the request may pass; its units were counted.
	Allowed bool
	// Limit is the policy's Max.
	Limit int64
	// Remaining is how many single-unit requests would pass right after this
	// decision; never negative.
	Remaining int64
	// RetryAfter is, when denied, how long until the same request could pass
	// if nothing else is spent; zero when allowed.
	RetryAfter time.Duration
	// ResetAfter is how long until the identity's state is empty again (full
	// quota) if nothing else is spent.
	ResetAfter time.Duration
	// Source says where the decision was made.
	Source Source
	// Staleness is, for decisions made from a local view of a global count,
	// the age of the oldest information that view relies on; zero for
	// authoritative decisions.
	Staleness time.Duration
}
