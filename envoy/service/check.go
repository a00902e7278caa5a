package service

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// checkLimit is the limit of the limiter a backend's CheckClient builds to
// probe Redis with: every limit's keys have the prefix and shape of every
// other's.
var checkLimit = core.PerWindow(1, time.Second)

// CheckClient tells whether the backend's Redis client reaches every key
// of the Redis behind it, reading keys of the backend's prefix and layout
// (the CheckClient of a backends/redis Limiter the backend would build, not
// kept, so an ACL user granted Prefix's keys may read them; none is
// written): nil when it does or the server is not in cluster mode; a
// *redis.RedirectError (matching core.ErrNotClusterClient) when a Redis
// Cluster node redirected the client, which does not follow redirections;
// a *core.UnavailableError when Redis does not answer or refuses (NOPERM),
// or ctx's deadline passes; a *redis.CanceledError (matching
// context.Canceled, not core.ErrUnavailable) when ctx was cancelled; an
// error matching core.ErrInvalid for bad options. ctx bounds the call.
func (b *RedisBackend) CheckClient(ctx context.Context) error {
	l, err := b.newLimiter(checkLimit)
	if err != nil {
		return err
	}
	return l.CheckClient(ctx)
}

// CheckClient is RedisBackend's CheckClient for the budget backend: it
// reads keys of a budget.Limiter the backend would build (not started nor
// kept), in a hash tag of Namespace-<max>-<window ms>, so an ACL user
// granted "{" + Namespace + "-*" may read them. Its errors are
// RedisBackend's, with a *budget.RedirectError for a redirection and a
// *budget.CanceledError for a cancelled ctx.
func (b *BudgetBackend) CheckClient(ctx context.Context) error {
	l, _, err := b.newLimiter(checkLimit)
	if err != nil {
		return err
	}
	return l.CheckClient(ctx)
}
