package logtest

import (
	"context"
	"log"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapture: lines from log, log/slog's default logger and go-redis'
// own package logger all land in the Capture. The go-redis line is logged
// by go-redis itself (its connection pool failing to dial a loopback port
// nobody listens on), so the test fails if Start did not install the
// Capture as go-redis' logger.
func TestCapture(t *testing.T) {
	c := Start(t)
	log.Print("from log")
	slog.Info("from slog")
	port, err := freeport.Get()
	require.NoError(t, err)
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port),
		MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer rdb.Close()
	err = rdb.Ping(context.Background()).Err()
	require.Error(t, err, "Ping of closed port %d succeeded", port)
	for _, want := range []string{"from log", "from slog",
		"redis: connection pool: failed to dial", "127.0.0.1:" + strconv.Itoa(port)} {
		assert.Contains(t, c.String(), want, "capture %q lacks %q", c, want)
	}
}
