package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisDBWithClusterRefused: a -redis-db other than 0 with a Redis
// Cluster, which has database 0 only, is refused (exit 2, one line naming
// -redis-db): with -redis-cluster or several -redis-addr (a cluster
// client, which dropped it unsaid and counted in database 0), by flag or
// variable, and with one -redis-addr of a real Cluster node without
// -redis-cluster, found at startup for the redis and budget backends (the
// node refuses the SELECT of every connection: the startup check logged
// Redis as away, leaving every decision to the fail mode). A Sentinel's
// master, which honours the database,
// and one plain node parse. It catches each refusal dropped.
func TestRedisDBWithClusterRefused(t *testing.T) {
	cfg := writeConfig(t, oneAnHour)
	refused := func(t *testing.T, args []string, env map[string]string, want ...string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stderr bytes.Buffer
		code := run(ctx, append([]string{"-config", cfg, "-grpc-addr", "127.0.0.1:0", "-http-addr", ""}, args...),
			func(k string) string { return env[k] }, &stderr, nil, func(string, string) {
				t.Error("must not serve")
				cancel()
			})
		assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr.String())
		for _, w := range want {
			assert.Contains(t, stderr.String(), w)
		}
		assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
	}
	static := "-redis-db 1: a Redis Cluster has database 0 only; drop -redis-db (EDGELIMIT_REDIS_DB)"
	refused(t, []string{"-redis-cluster", "-redis-db", "1"}, nil, static)
	refused(t, []string{"-redis-addr", "127.0.0.1:1,127.0.0.1:2", "-redis-db", "1"}, nil, static)
	refused(t, []string{"-backend", "budget", "-budget-pops", "1"}, map[string]string{"EDGELIMIT_REDIS_CLUSTER": "true", "EDGELIMIT_REDIS_DB": "1"}, static)
	for _, args := range [][]string{
		{"-redis-master", "mymaster", "-redis-addr", "127.0.0.1:1,127.0.0.1:2", "-redis-db", "1"},
		{"-redis-master", "mymaster", "-redis-cluster", "-redis-db", "1"},
		{"-redis-addr", "127.0.0.1:1", "-redis-db", "1"},
	} {
		_, err := parse(append([]string{"-config", cfg}, args...), noEnv, &bytes.Buffer{})
		require.NoError(t, err, "%v", args)
	}

	_, cl := redistest.Cluster(t)
	node := cl.Addrs()[0]
	for _, backend := range [][]string{{"-backend", "redis"}, {"-backend", "budget", "-budget-pops", "1"}} {
		t.Run(backend[1], func(t *testing.T) {
			refused(t, append([]string{"-redis-addr", node, "-redis-db", "1", "-redis-timeout", "30s"}, backend...), nil,
				"-redis-db 1: -redis-addr "+node+" is a node of a Redis Cluster, which has database 0 only", "pass -redis-cluster")
		})
	}
}
