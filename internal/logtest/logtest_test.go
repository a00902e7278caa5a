package logtest

import (
	"context"
	"log"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/freeport"
	"github.com/redis/go-redis/v9"
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
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port),
		MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Fatalf("Ping of closed port %d succeeded", port)
	}
	for _, want := range []string{"from log", "from slog",
		"redis: connection pool: failed to dial", "127.0.0.1:" + strconv.Itoa(port)} {
		if !strings.Contains(c.String(), want) {
			t.Errorf("capture %q lacks %q", c, want)
		}
	}
}
