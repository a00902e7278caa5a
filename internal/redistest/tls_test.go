package redistest

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/internal/tlstest"
	"github.com/redis/go-redis/v9"
)

// TestStartTLS: the TLS-only server answers its TLS client, refuses a plain
// TCP client on the same port, and comes back over TLS after Kill and
// Restart.
func TestStartTLS(t *testing.T) {
	p := StartTLS(t, tlstest.New(t))
	c := p.Client()
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	plain := redis.NewClient(&redis.Options{Addr: p.Addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: time.Second})
	defer plain.Close()
	if err := plain.Ping(ctx).Err(); err == nil {
		t.Fatal("a plain TCP client got PONG from a TLS-only server")
	}
	p.Kill()
	if err := p.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if n, err := c.DBSize(ctx).Result(); err != nil || n != 0 {
		t.Fatalf("restarted TLS server: dbsize=%d err=%v, want empty", n, err)
	}
}
