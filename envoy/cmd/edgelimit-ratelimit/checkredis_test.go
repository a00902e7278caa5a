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

// TestClusterNodeWithoutClusterFlag: -redis-addr one node of a real Redis
// Cluster without -redis-cluster builds a plain client, which the cluster
// would redirect for every identity of another node's slots; the command
// refuses to start (exit 2, one line naming -redis-cluster) for the redis
// and budget backends, and with -redis-cluster it serves.
func TestClusterNodeWithoutClusterFlag(t *testing.T) {
	_, cl := redistest.Cluster(t)
	node := cl.Addrs()[0]
	cfg := writeConfig(t, oneAnHour)
	for _, backend := range [][]string{{"-backend", "redis"}, {"-backend", "budget", "-budget-pops", "1"}} {
		t.Run(backend[1], func(t *testing.T) {
			args := append([]string{"-config", cfg, "-redis-addr", node, "-redis-timeout", "2s",
				"-grpc-addr", "127.0.0.1:0", "-http-addr", ""}, backend...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr bytes.Buffer
			code := run(ctx, args, noEnv, &stderr, nil, func(string, string) {
				t.Error("must not serve on a plain client of a cluster node")
				cancel()
			})
			assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), "-redis-addr "+node+" is a node of a Redis Cluster", "the refusal names the address")
			assert.Contains(t, stderr.String(), "-redis-cluster", "the refusal names the fix")
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())

			s := serve(t, append([]string{"-config", cfg, "-redis-addr", node, "-redis-cluster", "-redis-timeout", "2s"}, backend...)...)
			assert.Equal(t, []string{"OK", "OVER_LIMIT"}, s.codes(t, 2), "1 an hour, counted on the cluster")
			assert.Equal(t, exitOK, s.stop(), "a graceful stop; log: %s", s.stderr.String())
		})
	}
}

// TestStartsWithRedisAway: a Redis that does not answer the startup check
// (stopped) does not keep the command from serving: the fail mode decides
// (closed: OVER_LIMIT), and the log says the check went unanswered.
func TestStartsWithRedisAway(t *testing.T) {
	rs := redistest.Start(t)
	require.NoError(t, rs.Stop())
	s := serve(t, "-config", writeConfig(t, oneAnHour), "-backend", "redis", "-redis-addr", rs.Addr, "-fail-mode", "closed")
	assert.Equal(t, []string{"OVER_LIMIT"}, s.codes(t, 1), "Redis away, fail-closed")
	assert.Equal(t, exitOK, s.stop())
	assert.Contains(t, s.stderr.String(), "redis did not answer the startup check", "the log: %s", s.stderr.String())
}

// TestPrefixWithBraceRefused: a -redis-prefix the redis backend refuses
// (a brace, which would move every key's hash tag) stops the command at
// the startup check (exit 2, one line naming the backend and the brace).
// Caught mutation: the check's refusal of the options logged as an
// unanswered Redis (a warning line before the rules' load refuses the
// same prefix).
func TestPrefixWithBraceRefused(t *testing.T) {
	rs := redistest.Start(t)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"-config", writeConfig(t, oneAnHour), "-backend", "redis",
		"-redis-addr", rs.Addr, "-redis-prefix", "a{b", "-grpc-addr", "127.0.0.1:0", "-http-addr", ""},
		noEnv, &stderr, nil, func(string, string) { t.Error("must not serve with a prefix the backend refuses") })
	assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr.String())
	assert.Contains(t, stderr.String(), "the redis backend refuses its options", "stderr")
	assert.Contains(t, stderr.String(), "braces", "stderr")
	assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
}
