package budget

import (
	"context"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clustercheck"
	"github.com/redis/go-redis/v9"
)

// ErrNotClusterClient is matched (errors.Is) by every RedirectError and by
// CheckClient's refusal: a Redis Cluster node redirected a call of a client
// that does not follow redirections. It is core.ErrNotClusterClient, the same value as
// backends/redis' ErrNotClusterClient, and matches core.ErrInvalid.
var ErrNotClusterClient = core.ErrNotClusterClient

// RedirectError is returned by a call a Redis Cluster node answered MOVED
// or ASK while the Limiter's client is not a *redis.ClusterClient: a
// *redis.Client (or a Sentinel failover client, or a Ring) pointed at
// nodes of a cluster, which never follows redirections, so every group
// whose hash tag another node serves is refused. That is a configuration
// error, not an outage: the Limiter does not go down and decides nothing
// on its view for it (AllowN returns the zero core.Decision, denied, not
// the fallback's admission), and the error matches core.ErrInvalid and
// ErrNotClusterClient, not core.ErrUnavailable. Nothing was written for
// the call. Build the client with redis.NewClusterClient; at startup,
// CheckClient refuses such a client at once, and returns one too.
//
// A call's error is told by the client's Go type: a *redis.ClusterClient
// follows redirections itself, so one it still returns (its MaxRedirects
// spent on a slot moving again and again) is a *core.UnavailableError; any
// other client's MOVED or ASK is a RedirectError. A type of the user's
// wrapping a *redis.ClusterClient follows redirections too and passes
// CheckClient, but in that rare case, a slot still moving after the
// wrapped client's redirections, its call fails with a RedirectError
// (no decision, the Limiter not down) rather than as an outage.
type RedirectError struct {
	Op  string // what was being done: "budget script", "budget check client"
	Err error  // the MOVED or ASK reply
}

// Error describes the operation, the reply and the fix.
func (e *RedirectError) Error() string {
	return "budget: " + e.Op + ": " + e.Err.Error() +
		": a Redis Cluster node redirected the call; use a *redis.ClusterClient (redis.NewClusterClient)"
}

// Is reports whether target is core.ErrInvalid or ErrNotClusterClient.
func (e *RedirectError) Is(target error) bool {
	return target == core.ErrInvalid || target == ErrNotClusterClient
}

// Unwrap returns the MOVED or ASK reply.
func (e *RedirectError) Unwrap() error { return e.Err }

// storeError turns the error of a script call on rdb into what the caller
// gets: a *RedirectError for a redirection rdb cannot follow (see
// RedirectError: told by rdb's type), else a *core.UnavailableError.
func storeError(rdb any, err error) error {
	if _, cluster := rdb.(*redis.ClusterClient); !cluster && clustercheck.IsRedirect(err) {
		return &RedirectError{Op: "budget script", Err: err}
	}
	return &core.UnavailableError{Op: "budget script", Err: err}
}

// CheckClient tells whether rdb reaches every key of the Redis behind it,
// by what rdb does, whatever its Go type; call it at startup, before New's
// Limiter meets a misconfiguration on its first requests (New sends
// nothing). It sends CLUSTER SLOTS through rdb; a server not in cluster
// mode has nothing to redirect: nil. On a Redis Cluster it sends, in one
// pipeline through rdb (one round trip per master for a cluster client,
// one in all for a plain one), EXISTS of three keys hashing to the slots
// of each master (keys "{el:clientcheck:<n>}", of this package's key
// shape, a hash tag of the default Namespace: read, never written). A MOVED
// or ASK reply means rdb does not follow redirections (a *redis.Client, a
// Sentinel client or a *redis.Ring on the cluster's nodes), so every
// group another node serves would be refused: a *RedirectError (Op
// "budget check client") matching ErrNotClusterClient and core.ErrInvalid.
// None: nil, for a *redis.ClusterClient, a type of the user's wrapping one,
// or a plain client of a cluster whose one master owns every slot. rdb
// nil: an error matching core.ErrInvalid. Redis unreachable, or any other
// error reply (CLUSTERDOWN; NOPERM when rdb's ACL user may not run CLUSTER
// SLOTS or read the {el:* keys): a *core.UnavailableError. ctx bounds the
// call. It judges a client as backends/redis' CheckClient does, with this
// package's error type.
func CheckClient(ctx context.Context, rdb redis.UniversalClient) error {
	return clustercheck.Check(ctx, rdb, clustercheck.TaggedKey, "budget check client", func(reply error) error {
		return &RedirectError{Op: "budget check client", Err: reply}
	})
}
