package redis

import (
	"context"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

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

// reloadTopology asks a Redis Cluster client to reload its slot map in the
// background after a failed call (go-redis runs one reload at a time, at
// most every 200 ms). go-redis reloads it by itself only on a MOVED or ASK
// reply or every ClusterStateReloadInterval (60 s by default), and a dead
// master sends neither: without this, after its replica took over, the
// limiter would keep sending the dead master's identities to its address,
// failing them, for up to that interval.
func (l *Limiter) reloadTopology() {
	if c, ok := l.client.(*goredis.ClusterClient); ok {
		c.ReloadState(context.Background())
	}
}
