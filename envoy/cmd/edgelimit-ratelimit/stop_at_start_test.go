package main

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
)

// TestStopAtStartExitsCleanly: a stop asked before the command serves (a
// SIGTERM right at start: its context already done) is a graceful stop,
// exit 0, whichever of the server's start and stop runs first (the
// server's tests pin each order). It catches a stop at startup that
// surfaces as grpc.ErrServerStopped (exit 1).
func TestStopAtStartExitsCleanly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stderr := &syncBuffer{}
	code := run(ctx, []string{"-config", writeConfig(t, oneAnHour), "-backend", "local",
		"-grpc-addr", "127.0.0.1:0", "-http-addr", "127.0.0.1:0"}, noEnv, stderr, nil, nil)
	assert.Equal(t, exitOK, code, "log: %s", stderr.String())
}

// TestStopAtStartWithRedis: the same stop before serving, for the redis
// and budget backends on a healthy Redis: the startup check (checkRedis)
// runs on the stopping context and its cancellation is no outage, so the
// command neither refuses its options (exit 2) nor logs that Redis did not
// answer; it stops gracefully, exit 0. Caught mutations: a startup check
// whose caller left taken for an unanswered Redis (the warning), or for
// options the backend refuses.
func TestStopAtStartWithRedis(t *testing.T) {
	rs := redistest.Start(t)
	cfg := writeConfig(t, oneAnHour)
	for _, backend := range [][]string{{"-backend", "redis"}, {"-backend", "budget", "-budget-pops", "1"}} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		stderr := &syncBuffer{}
		code := run(ctx, append([]string{"-config", cfg, "-redis-addr", rs.Addr,
			"-grpc-addr", "127.0.0.1:0", "-http-addr", "127.0.0.1:0"}, backend...), noEnv, stderr, nil, nil)
		assert.Equal(t, exitOK, code, "%s: log: %s", backend[1], stderr.String())
		assert.NotContains(t, stderr.String(), "did not answer", "%s: Redis answers", backend[1])
	}
}
