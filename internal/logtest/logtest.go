// Package logtest captures what the process logs during a test — through
// the standard log package (which log/slog's default logger also writes
// through) and through go-redis' package logger — so a test can assert that
// a secret never reaches a log. The loggers are process-wide: a test that
// captures must not run in parallel with others.
package logtest

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// Capture is everything logged since Start; safe for concurrent use.
type Capture struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Start redirects the standard logger and go-redis' logger into a new
// Capture until t's cleanup, which points them back at standard error.
func Start(t testing.TB) *Capture {
	t.Helper()
	c := &Capture{}
	prev := log.Writer()
	log.SetOutput(c)
	redis.SetLogger(c)
	t.Cleanup(func() {
		log.SetOutput(prev)
		redis.SetLogger(stderrLogger{log.New(os.Stderr, "redis: ", log.LstdFlags)})
	})
	return c
}

// Write records p (the standard logger's output).
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.Write(p)
}

// Printf records one go-redis log line.
func (c *Capture) Printf(_ context.Context, format string, v ...any) {
	c.Write([]byte("redis: " + fmt.Sprintf(format, v...) + "\n"))
}

// String is everything captured so far.
func (c *Capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// stderrLogger is go-redis' default: lines to standard error.
type stderrLogger struct{ l *log.Logger }

func (s stderrLogger) Printf(_ context.Context, format string, v ...any) {
	s.l.Printf(format, v...)
}
