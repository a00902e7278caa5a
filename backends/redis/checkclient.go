package redis

import (
	"context"
	"errors"
	"strconv"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clustercheck"
	goredis "github.com/redis/go-redis/v9"
)

// CheckClient tells whether client reaches every key of the Redis behind
// it, by what client does, whatever its Go type, for a limiter of the
// default prefix (DefaultPrefix, "el"); for a limiter built WithPrefix,
// call the Limiter's own CheckClient, which probes that prefix's keys. It
// sends CLUSTER SLOTS through client; a server not in cluster mode has
// nothing to redirect: nil. On a Redis Cluster it sends, in one pipeline
// through client (one round trip per master for a cluster client, one in
// all for a plain one), EXISTS of three keys hashing to the slots of each
// master (keys "el:clientcheck:<n>", read, never written). A MOVED or ASK
// reply means client does not follow redirections (a *goredis.Client, a
// Sentinel client or a *goredis.Ring on the cluster's nodes) and the calls
// of its identities that other nodes serve would fail: a *RedirectError
// (Op "redis check client") matching ErrNotClusterClient and
// core.ErrInvalid. None: nil, for a *goredis.ClusterClient, a type of the
// user's wrapping one, or a plain client of a cluster whose one master
// owns every slot. client nil: an error matching core.ErrInvalid. Redis
// unreachable, or any other error reply (CLUSTERDOWN; NOPERM when the
// client's ACL user may not run CLUSTER SLOTS or read the el:* keys): a
// *core.UnavailableError. ctx bounds the call: cancelled, before the
// call (nothing is sent) or while it ran, it returns a *CanceledError
// (matching context.Canceled, not core.ErrUnavailable), as a decision
// does, since a caller that left says nothing of Redis' health; its
// deadline passing is a *core.UnavailableError wrapping the deadline, as
// for a decision: Redis did not answer within the caller's bound, which
// is what a startup check or a health probe sets one to learn. A finished
// check's answer (nil, a *RedirectError) stands whatever ctx says after.
// New sends nothing to Redis; call CheckClient at startup to refuse the
// misconfiguration before the first request meets it.
func CheckClient(ctx context.Context, client goredis.UniversalClient) error {
	return check(ctx, client, clustercheck.PlainKey)
}

// CheckClient is the package's CheckClient on the limiter's client, with
// probe keys of the limiter's own prefix and layout: Key of identity
// "clientcheck:<n>" ("myapp:{clientcheck:7}:s:10/1s" under
// WithPrefix("myapp")), or under the bucketed layout (Bucketed) the marker
// of bucket n ("{myapp:7}:s:10/1s:m", BucketMarkerKey; n runs past the
// bucket count until every master has its probes), so an ACL user granted
// the limiter's keys ("~myapp:*", "~{myapp:*" when bucketed) may read
// them. None is written. Its errors are the package CheckClient's (a
// *RedirectError, a *core.UnavailableError: NOPERM when the user may not
// read them; a *CanceledError when ctx was cancelled). Call it at
// startup, after New and before the first request.
func (l *Limiter) CheckClient(ctx context.Context) error {
	key := func(n int) string { return l.Key("clientcheck:" + strconv.Itoa(n)) }
	if l.bucketed {
		key = func(n int) string { return BucketMarkerKey(l.cfg.prefix, n, l.suffix) }
	}
	return check(ctx, l.client, key)
}

// check is clustercheck.Check with probe keys key(0), key(1), ... and
// this package's Op, RedirectError and CanceledError: a check that could
// not finish because its caller's context was cancelled (before it, when
// go-redis sends nothing, or while it ran) says nothing of Redis' health.
func check(ctx context.Context, client goredis.UniversalClient, key func(n int) string) error {
	err := clustercheck.Check(ctx, client, key, "redis check client", func(reply error) error {
		return &RedirectError{Op: "redis check client", Err: reply}
	})
	if errors.Is(err, core.ErrUnavailable) {
		if ce := canceled(ctx, "redis check client"); ce != nil {
			return ce
		}
	}
	return err
}
