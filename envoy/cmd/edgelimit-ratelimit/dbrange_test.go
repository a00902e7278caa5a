package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/stretchr/testify/assert"
)

// TestRedisDBOutOfRangeRefused: a -redis-db past the databases of the
// Redis behind it (16 on a default redis-server, which has 0 to 15) is
// refused at startup (exit 2, one line naming -redis-db), for the redis
// and budget backends, where the refused SELECT of every connection was
// logged as Redis away and every decision left to the fail mode
// (fail-open: nothing limited). It catches the refusal dropped. The
// check's -redis-timeout of 30 s only bounds a wait on a loaded machine:
// Redis refuses the SELECT at once.
func TestRedisDBOutOfRangeRefused(t *testing.T) {
	rs := redistest.Start(t)
	cfg := writeConfig(t, oneAnHour)
	for _, backend := range [][]string{{"-backend", "redis"}, {"-backend", "budget", "-budget-pops", "1"}} {
		t.Run(backend[1], func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr bytes.Buffer
			args := append([]string{"-config", cfg, "-redis-addr", rs.Addr, "-redis-db", "16", "-redis-timeout", "30s",
				"-grpc-addr", "127.0.0.1:0", "-http-addr", ""}, backend...)
			code := run(ctx, args, noEnv, &stderr, nil, func(string, string) {
				t.Error("must not serve on a database Redis does not have")
				cancel()
			})
			assert.Equal(t, exitUsage, code, "exit code; stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), "-redis-db 16: Redis has no such database")
			assert.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one line: %q", stderr.String())
		})
	}
}
