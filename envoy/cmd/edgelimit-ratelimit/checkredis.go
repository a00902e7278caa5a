package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/edgelimit/edgelimit/core"
)

// checkRedis refuses, at startup, a backend whose Redis client cannot
// reach every key of the Redis behind it: a single -redis-addr of a Redis
// Cluster node without -redis-cluster, a plain client that never follows
// the cluster's redirections (the backend's CheckClient, which reads keys
// of -redis-prefix in the backend's layout, so an ACL user granted only
// those may run it), whose every identity of another node's slots would
// be refused; or such a node refusing the SELECT of a -redis-db other
// than 0 (selectError), or a Redis refusing that of a -redis-db past
// its databases (selectError), either of which would leave every
// decision to the fail mode. The error names the fix; so does one for options the backend
// refuses (a -redis-prefix with a brace). A Redis that does not
// answer within -redis-timeout, or refuses the reads, is no reason not to
// start, since the fail mode decides while it is away: that is logged,
// and nil returned. A check cut short by ctx's cancellation (the command
// told to stop while starting) says nothing of Redis: nil, and run stops
// gracefully once it sees ctx done. It runs before the client's metrics hook is added
// (buildBackend), so the Redis series do not count it.
func checkRedis(ctx context.Context, b interface{ CheckClient(context.Context) error }, o *options, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, o.redisTimeout)
	defer cancel()
	err := b.CheckClient(ctx)
	if dbErr := selectError(o, err); dbErr != nil {
		return dbErr
	}
	switch {
	case errors.Is(err, context.Canceled):
		log.Info("startup check cut short: stopping", "err", err)
	case errors.Is(err, core.ErrNotClusterClient):
		return fmt.Errorf("-redis-addr %s is a node of a Redis Cluster, which redirected the startup check's reads: pass -redis-cluster (EDGELIMIT_REDIS_CLUSTER), or every node's address, comma-separated", o.redisAddr)
	case errors.Is(err, core.ErrUnavailable):
		log.Warn("redis did not answer the startup check; the fail mode decides until it does", "err", err)
	case err != nil:
		return fmt.Errorf("the %s backend refuses its options: %w", o.backend, err)
	}
	return nil
}
