package main

import (
	"context"
	"testing"

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
