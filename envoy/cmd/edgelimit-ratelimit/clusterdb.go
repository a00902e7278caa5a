package main

import (
	"fmt"
	"strings"
)

// selectRefused is the error a Redis Cluster node answers a SELECT of a
// database other than 0 with, which a plain client sends for -redis-db at
// each connection.
const selectRefused = "SELECT is not allowed in cluster mode"

// dbOutOfRange is the error Redis answers a SELECT of a database past its
// databases setting with.
const dbOutOfRange = "DB index is out of range"

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

// selectError is the refusal of a -redis-db whose SELECT, sent by the
// client at each connection, the startup check found refused: by a Redis
// Cluster node, which has database 0 only (a single -redis-addr without
// -redis-cluster), or by a Redis whose databases setting it passes. Every
// connection would fail, leaving every decision to the fail mode. It is
// nil when err is neither.
func selectError(o *options, err error) error {
	switch {
	case o.redisDB == 0 || err == nil:
		return nil
	case strings.Contains(err.Error(), selectRefused):
		return fmt.Errorf("-redis-db %d: -redis-addr %s is a node of a Redis Cluster, which has database 0 only: drop -redis-db (EDGELIMIT_REDIS_DB) and pass -redis-cluster (EDGELIMIT_REDIS_CLUSTER)", o.redisDB, o.redisAddr)
	case strings.Contains(err.Error(), dbOutOfRange):
		return fmt.Errorf("-redis-db %d: Redis has no such database (%s): want one below its databases setting (16 by default)", o.redisDB, dbOutOfRange)
	}
	return nil
}
