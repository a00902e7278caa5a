package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/tlstest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestStartTLS: the TLS-only server answers its TLS client, refuses a plain
// TCP client on the same port, and comes back over TLS after Kill and
// Restart.
func TestStartTLS(t *testing.T) {
	p := StartTLS(t, tlstest.New(t))
	c := p.Client()
	defer c.Close()
	ctx := context.Background()
	err := c.Set(ctx, "k", "v", 0).Err()
	require.NoError(t, err, "SET over TLS")
	plain := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: time.Second})
	defer plain.Close()
	err = plain.Ping(ctx).Err()
	require.Error(t, err, "a plain TCP client got PONG from a TLS-only server")
	p.Kill()
	err = p.Restart()
	require.NoError(t, err, "Restart")
	n, err := c.DBSize(ctx).Result()
	require.NoError(t, err, "restarted TLS server: dbsize=%d err=%v, want empty", n, err)
	require.Equal(t, int64(0), n, "restarted TLS server: dbsize=%d err=%v, want empty", n, err)
}
