package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	redisbackend "github.com/edgelimit/edgelimit/backends/redis"
	goredis "github.com/redis/go-redis/v9"
)

// checkRedis refuses, at startup, a client that cannot reach every key of
// the Redis behind it: a single -redis-addr of a Redis Cluster node
// without -redis-cluster, a plain client that never follows the cluster's
// redirections (redis.CheckClient), whose every identity of another node's
// slots would be refused. The error names the fix. A Redis that does not
// answer within -redis-timeout is no reason not to start, since the fail
// mode decides while it is away: that is logged, and nil returned.
func checkRedis(ctx context.Context, rdb goredis.UniversalClient, o *options, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, o.redisTimeout)
	defer cancel()
	err := redisbackend.CheckClient(ctx, rdb)
	switch {
	case errors.Is(err, redisbackend.ErrNotClusterClient):
		return fmt.Errorf("-redis-addr %s is a node of a Redis Cluster, which redirected the startup check's reads: pass -redis-cluster (EDGELIMIT_REDIS_CLUSTER), or every node's address, comma-separated", o.redisAddr)
	case err != nil:
		log.Warn("redis did not answer the startup check; the fail mode decides until it does", "err", err)
	}
	return nil
}
