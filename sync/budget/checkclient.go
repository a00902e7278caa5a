package budget

import (
	"context"
	"errors"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clustercheck"
	"github.com/redis/go-redis/v9"
)

// CheckClient tells whether rdb reaches every key of the Redis behind it,
// by what rdb does, whatever its Go type, for a Limiter of the default
// Namespace ("el"); for any other Namespace, call the Limiter's own
// CheckClient, which probes that Namespace's keys. Call it at startup,
// before New's Limiter meets a misconfiguration on its first requests (New
// sends nothing). It sends CLUSTER SLOTS through rdb; a server not in
// cluster mode has nothing to redirect: nil. On a Redis Cluster it sends,
// in one pipeline through rdb (one round trip per master for a cluster
// client, one in all for a plain one), EXISTS of three keys hashing to the
// slots of each master (keys "{el:clientcheck:<n>}", of this package's key
// shape, a hash tag of the default Namespace: read, never written). A
// MOVED or ASK reply means rdb does not follow redirections (a
// *redis.Client, a Sentinel client or a *redis.Ring on the cluster's
// nodes), so every group another node serves would be refused: a
// *RedirectError (Op "budget check client") matching ErrNotClusterClient
// and core.ErrInvalid. None: nil, for a *redis.ClusterClient, a type of
// the user's wrapping one, or a plain client of a cluster whose one master
// owns every slot. rdb nil: an error matching core.ErrInvalid. Redis
// unreachable, or any other error reply (CLUSTERDOWN; NOPERM when rdb's
// ACL user may not run CLUSTER SLOTS or read the {el:* keys): a
// *core.UnavailableError. ctx bounds the call: cancelled, before the
// call (nothing is sent) or while it ran, it returns a *CanceledError
// (matching context.Canceled, not core.ErrUnavailable), as a decision
// does, since a caller that left says nothing of Redis' health; its
// deadline passing is a *core.UnavailableError wrapping the deadline, as
// for a decision: Redis did not answer within the caller's bound, which
// is what a startup check or a health probe sets one to learn. A finished
// check's answer (nil, a *RedirectError) stands whatever ctx says after.
// It judges a client as backends/redis' CheckClient does, with this
// package's error types.
func CheckClient(ctx context.Context, rdb redis.UniversalClient) error {
	return check(ctx, rdb, clustercheck.TaggedKey)
}

// CheckClient is the package's CheckClient on the Limiter's client, with
// probe keys of the Limiter's own key shape, "{<Keyspace>:g<n>}:clientcheck"
// ("{myapp:10/1s:g7}:clientcheck" for Namespace "myapp" and 10 per
// second): each in a hash tag of the shape of the limit's groups (see
// Keyspace; n runs past Groups until every master has its probes), so an
// ACL user granted the Limiter's keys ("~{myapp:*") may read them. None is
// written. Its errors are the package CheckClient's (a *RedirectError, a
// *core.UnavailableError: NOPERM when the user may not read them; a
// *CanceledError when ctx was cancelled), and ErrClosed after Close. Call it at startup, after New and before the
// first request.
func (l *Limiter) CheckClient(ctx context.Context) error {
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return check(ctx, l.rdb, func(n int) string { return l.m.tag(n) + ":clientcheck" })
}

// check is clustercheck.Check with probe keys key(0), key(1), ... and
// this package's Op, RedirectError and CanceledError: a check that could
// not finish because its caller's context was cancelled (before it, when
// go-redis sends nothing, or while it ran) says nothing of Redis' health.
func check(ctx context.Context, rdb redis.UniversalClient, key func(n int) string) error {
	err := clustercheck.Check(ctx, rdb, key, "budget check client", func(reply error) error {
		return &RedirectError{Op: "budget check client", Err: reply}
	})
	if errors.Is(err, core.ErrUnavailable) {
		if ce := canceled(ctx, "budget check client"); ce != nil {
			return ce
		}
	}
	return err
}
