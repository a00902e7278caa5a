package budget

import (
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clientkind"
	"github.com/edgelimit/edgelimit/internal/clustercheck"
)

// ErrNotClusterClient is matched (errors.Is) by every RedirectError and by
// CheckClient's refusal: a Redis Cluster node redirected a call of a client
// that does not follow redirections. It is core.ErrNotClusterClient, the same value as
// backends/redis' ErrNotClusterClient, and matches core.ErrInvalid.
var ErrNotClusterClient = core.ErrNotClusterClient

// RedirectError is returned by a call a Redis Cluster node answered MOVED
// or ASK while the Limiter's client is not a Redis Cluster client: a
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
// A call's error is told by the client's method set, not its Go type: a
// Redis Cluster client, a *redis.ClusterClient or a type of the user's
// embedding one (instrumentation, a circuit breaker: any client with the
// ForEachMaster and ReloadState methods of a *redis.ClusterClient),
// follows redirections itself, so one it still returns (its MaxRedirects
// spent on a slot moving again and again) is a *core.UnavailableError, an
// outage; any other client's MOVED or ASK is a RedirectError.
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
// RedirectError: told by rdb's method set), else a *core.UnavailableError.
func storeError(rdb any, err error) error {
	if _, cluster := clientkind.AsCluster(rdb); !cluster && clustercheck.IsRedirect(err) {
		return &RedirectError{Op: "budget script", Err: err}
	}
	return &core.UnavailableError{Op: "budget script", Err: err}
}
