package logtest

import (
	"context"
	"log"
	"log/slog"
	"strings"
	"testing"
)

// TestCapture: lines from log, log/slog's default logger and the go-redis
// Logging interface all land in the Capture.
func TestCapture(t *testing.T) {
	c := Start(t)
	log.Print("from log")
	slog.Info("from slog")
	c.Printf(context.Background(), "from go-redis %d", 1)
	for _, want := range []string{"from log", "from slog", "redis: from go-redis 1"} {
		if !strings.Contains(c.String(), want) {
			t.Errorf("capture %q lacks %q", c, want)
		}
	}
}
