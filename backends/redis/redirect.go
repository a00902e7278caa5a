package redis

import (
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clientkind"
	"github.com/edgelimit/edgelimit/internal/clustercheck"
)

// ErrNotClusterClient is matched (errors.Is) by every RedirectError and by
// CheckClient's refusal: a Redis Cluster node redirected a call of a client
// that does not follow redirections. It is core.ErrNotClusterClient, the
// same value as sync/budget's ErrNotClusterClient, and matches
// core.ErrInvalid.
var ErrNotClusterClient = core.ErrNotClusterClient

// RedirectError is returned, with no decision (the zero core.Decision,
// denied), by a call a Redis Cluster node answered MOVED or ASK while the
// limiter's client is not a Redis Cluster client: a *goredis.Client (or
// a Sentinel failover client) pointed at one node of a cluster, which never
// follows redirections, so every identity whose slot another node serves
// is refused. That is a configuration error, not an outage: the fail mode
// does not apply (WithFailOpen would admit every such identity unlimited),
// and the error matches core.ErrInvalid and ErrNotClusterClient, not
// core.ErrUnavailable. Nothing was written for the call. Build the client
// with goredis.NewClusterClient (or goredis.NewUniversalClient with the
// cluster's nodes). CheckClient returns one too, for the probe a node
// redirected.
//
// A call's error is told by the client's method set, not its Go type: a
// Redis Cluster client, a *goredis.ClusterClient or a type of the user's
// embedding one (instrumentation, a circuit breaker: any client with the
// ForEachMaster and ReloadState methods of a *goredis.ClusterClient),
// follows redirections itself, so one it still returns (its MaxRedirects
// spent on a slot moving again and again) is a *core.UnavailableError
// with the fail mode's decision; any other client's MOVED or ASK is a
// RedirectError.
type RedirectError struct {
	Op  string // what was being done, e.g. "redis evalsha"
	Err error  // the MOVED or ASK reply
}

// Error describes the operation, the reply and the fix.
func (e *RedirectError) Error() string {
	return "edgelimit: " + e.Op + ": " + e.Err.Error() +
		": a Redis Cluster node redirected the call; use a *goredis.ClusterClient (goredis.NewClusterClient)"
}

// Is reports whether target is core.ErrInvalid or ErrNotClusterClient.
func (e *RedirectError) Is(target error) bool {
	return target == core.ErrInvalid || target == ErrNotClusterClient
}

// Unwrap returns the MOVED or ASK reply.
func (e *RedirectError) Unwrap() error { return e.Err }

// storeError turns the error of a call to Redis into what the caller gets:
// a *RedirectError for a redirection the client cannot follow (see
// RedirectError: told by the client's method set), else a
// *core.UnavailableError.
func (l *Limiter) storeError(op string, err error) error {
	if _, cluster := clientkind.AsCluster(l.client); !cluster && clustercheck.IsRedirect(err) {
		return &RedirectError{Op: op, Err: err}
	}
	return &core.UnavailableError{Op: op, Err: err}
}
