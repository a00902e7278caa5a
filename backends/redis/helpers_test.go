package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// newLimiter builds a Limiter or fails the test.
func newLimiter(t testing.TB, c goredis.UniversalClient, l core.Limit, opts ...Option) *Limiter {
	t.Helper()
	lim, err := New(c, l, opts...)
	require.NoError(t, err, "New(%v)", l)
	return lim
}

// schedulerSlack is how much later than its deadline a call may return on
// a loaded machine (goroutines stalled, the race detector): generous on
// purpose; a test bounding latency states "deadline + schedulerSlack".
const schedulerSlack = 5 * time.Second

// model is core's Go math for one identity: the reference the scripts must
// match decision for decision.
type model struct {
	limit  core.Limit
	window core.WindowState
	log    core.LogState
	bucket core.BucketState
}

func (m *model) decide(now, n int64, commit bool) core.Decision {
	switch m.limit.Algorithm {
	case core.FixedWindow:
		return m.window.DecideFixed(m.limit, now, n, commit)
	case core.SlidingLog:
		return m.log.Decide(m.limit, now, n, commit)
	case core.TokenBucket:
		return m.bucket.Decide(m.limit, now, n, commit)
	}
	return m.window.DecideSliding(m.limit, now, n, commit)
}

// sameDecision compares what the algorithms compute (not Source).
func sameDecision(a, b core.Decision) bool {
	return a.Allowed == b.Allowed && a.Limit == b.Limit && a.Remaining == b.Remaining &&
		a.RetryAfter == b.RetryAfter && a.ResetAfter == b.ResetAfter
}

// at converts ms since the epoch to a time.Time.
func at(ms int64) time.Time { return time.UnixMilli(ms) }

// dbsize returns the number of keys, failing the test on error.
func dbsize(t testing.TB, c *goredis.Client) int64 {
	t.Helper()
	n, err := c.DBSize(context.Background()).Result()
	require.NoError(t, err, "DBSIZE")
	return n
}

// everyLimit returns lim with each algorithm in turn.
func everyLimit(lim core.Limit) []core.Limit {
	out := make([]core.Limit, 0, len(core.Algorithms))
	for _, a := range core.Algorithms {
		lim.Algorithm = a
		out = append(out, lim)
	}
	return out
}
