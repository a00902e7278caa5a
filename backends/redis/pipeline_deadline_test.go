package redis

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// TestPipelinedCallHonoursCallerDeadline: against a server that accepts
// connections and never answers, a pipelined decision returns when the
// caller's context ends, not after the limiter's own (longer) timeout.
func TestPipelinedCallHonoursCallerDeadline(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // hold it open, answer nothing
		}
	}()
	c := goredis.NewClient(&goredis.Options{Addr: ln.Addr().String(), MaxRetries: -1, DisableIdentity: true})
	defer c.Close()
	l, err := New(c, core.PerWindow(10, time.Minute), WithPipelining(100*time.Microsecond, 16), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = l.AllowN(ctx, "k", time.Now(), 1)
	took := time.Since(start)
	if !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("err %v, want ErrUnavailable", err)
	}
	if took > time.Second {
		t.Fatalf("pipelined call took %s with a 50ms caller deadline (limiter timeout 5s)", took)
	}
}
