// Package redistest gives tests a private, real redis-server. A test that
// needs Redis fails (never skips) with an install hint when redis-server is
// missing.
package redistest

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Start launches a private redis-server for the test and stops it in
// t.Cleanup. It calls t.Fatal with a clear message when that is impossible.
func Start(t testing.TB) *redisproc.Proc {
	t.Helper()
	p, err := redisproc.Start()
	require.NoError(t, err, "this test needs a real Redis")
	t.Cleanup(func() { p.Stop() })
	return p
}

// Client starts a private server (see Start) and returns a client to it,
// closed in t.Cleanup, together with the server.
func Client(t testing.TB) (*redis.Client, *redisproc.Proc) {
	t.Helper()
	p := Start(t)
	c := p.Client()
	t.Cleanup(func() { c.Close() })
	err := c.Ping(context.Background()).Err()
	require.NoError(t, err, "private redis-server on %s does not answer", p.Addr)
	return c, p
}
