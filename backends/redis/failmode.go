package redis

import "github.com/edgelimit/edgelimit/core"

// failDecision is the decision returned with an unavailability error:
// allowed (core.SourceFailOpen) under WithFailOpen, else denied
// (core.SourceFailClosed) with RetryAfter FailClosedRetry. Remaining is 0:
// the store's state is unknown, and nothing is counted.
func (l *Limiter) failDecision() core.Decision {
	if l.cfg.failOpen {
		return core.Decision{Allowed: true, Limit: l.limit.Max, Source: core.SourceFailOpen}
	}
	return core.Decision{Limit: l.limit.Max, RetryAfter: FailClosedRetry, Source: core.SourceFailClosed}
}
