package redis

import (
	"context"
	"fmt"
	"strings"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/clustercheck"
	goredis "github.com/redis/go-redis/v9"
)

// ErrNotClusterClient is matched (errors.Is) by every RedirectError and by
// CheckClient's refusal: a Redis Cluster node redirected a call of a client
// that does not follow redirections. It is core.ErrNotClusterClient, the
// same value as sync/budget's ErrNotClusterClient, and matches
// core.ErrInvalid.
var ErrNotClusterClient = core.ErrNotClusterClient

// RedirectError is returned, with no decision (the zero core.Decision,
// denied), by a call a Redis Cluster node answered MOVED or ASK while the
// limiter's client is not a *goredis.ClusterClient: a *goredis.Client (or
// a Sentinel failover client) pointed at one node of a cluster, which never
// follows redirections, so every identity whose slot another node serves
// is refused. That is a configuration error, not an outage: the fail mode
// does not apply (WithFailOpen would admit every such identity unlimited),
// and the error matches core.ErrInvalid and ErrNotClusterClient, not
// core.ErrUnavailable. Nothing was written for the call. Build the client
// with goredis.NewClusterClient (or goredis.NewUniversalClient with the
// cluster's nodes). A *goredis.ClusterClient follows redirections itself; one
// it still returns (a slot moving again and again) is a
// *core.UnavailableError.
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
// a *RedirectError for a redirection the client cannot follow, else a
// *core.UnavailableError.
func (l *Limiter) storeError(op string, err error) error {
	if _, cluster := l.client.(*goredis.ClusterClient); !cluster && clustercheck.IsRedirect(err) {
		return &RedirectError{Op: op, Err: err}
	}
	return &core.UnavailableError{Op: op, Err: err}
}

// CheckClient asks the Redis behind client whether client can reach every
// key there: a server in cluster mode (INFO cluster: cluster_enabled:1)
// behind a client that is not a *goredis.ClusterClient returns an error
// matching ErrNotClusterClient and core.ErrInvalid, since the calls of its
// identities that other nodes serve would fail with a *RedirectError.
// Redis unreachable: a *core.UnavailableError. A *goredis.ClusterClient
// is fine as it is and nothing is sent. New sends nothing to Redis; call
// CheckClient at startup to refuse the misconfiguration before the first
// request meets it. ctx bounds the call.
func CheckClient(ctx context.Context, client goredis.UniversalClient) error {
	if nilClient(client) {
		return fmt.Errorf("%w: nil redis client", core.ErrInvalid)
	}
	if _, ok := client.(*goredis.ClusterClient); ok {
		return nil
	}
	info, err := client.Info(ctx, "cluster").Result()
	if err != nil {
		return &core.UnavailableError{Op: "redis info cluster", Err: err}
	}
	for _, line := range strings.Split(info, "\n") {
		if strings.TrimSpace(line) == "cluster_enabled:1" {
			return fmt.Errorf("%w: %w: the server is a Redis Cluster node (cluster_enabled:1); use goredis.NewClusterClient",
				core.ErrInvalid, ErrNotClusterClient)
		}
	}
	return nil
}
