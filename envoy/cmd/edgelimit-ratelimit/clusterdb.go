package main

import (
	"fmt"
	"strings"
)

// selectRefused is the error a Redis Cluster node answers a SELECT of a
// database other than 0 with, which a plain client sends for -redis-db at
// each connection.
const selectRefused = "SELECT is not allowed in cluster mode"

// checkClusterDB refuses a -redis-db other than 0 with a Redis Cluster,
// which has database 0 only and whose client (-redis-cluster, or several
// -redis-addr without -redis-master) would drop the setting unsaid,
// counting in database 0. A Sentinel's master (-redis-master) honours it.
func checkClusterDB(o *options) error {
	if o.redisDB == 0 || o.redisMaster != "" {
		return nil
	}
	if o.redisCluster || strings.Contains(o.redisAddr, ",") {
		return fmt.Errorf("-redis-db %d: a Redis Cluster has database 0 only; drop -redis-db (EDGELIMIT_REDIS_DB)", o.redisDB)
	}
	return nil
}

// clusterDBError is the refusal of a -redis-db other than 0 that the
// startup check found sent to a Redis Cluster node (a single -redis-addr
// without -redis-cluster: the node refuses the SELECT of every
// connection, so every decision would be the fail mode's), or nil when
// err is not that.
func clusterDBError(o *options, err error) error {
	if o.redisDB == 0 || err == nil || !strings.Contains(err.Error(), selectRefused) {
		return nil
	}
	return fmt.Errorf("-redis-db %d: -redis-addr %s is a node of a Redis Cluster, which has database 0 only: drop -redis-db (EDGELIMIT_REDIS_DB) and pass -redis-cluster (EDGELIMIT_REDIS_CLUSTER)", o.redisDB, o.redisAddr)
}
