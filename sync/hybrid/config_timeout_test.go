package hybrid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// TestRedisCallBoundedByContextOnlyWithContextTimeout checks what
// Config.Redis's doc says bounds a Redis-decided request: against a Redis
// that hangs (SIGSTOP), a 100 ms deadline on Allow's ctx ends the call only
// when the client has ContextTimeoutEnabled; without it the call lasts the
// client's ReadTimeout (1 s here); a deadline-free ctx lasts ReadTimeout
// either way; against a killed Redis the deadline holds either way.
func TestRedisCallBoundedByContextOnlyWithContextTimeout(t *testing.T) {
	const readTimeout, deadline = time.Second, 100 * time.Millisecond
	p := redistest.Start(t)
	for _, c := range []struct {
		cte, withDeadline, kill bool
		min, max                time.Duration
	}{
		{cte: false, withDeadline: true, min: readTimeout - 50*time.Millisecond, max: 3 * readTimeout},
		{cte: true, withDeadline: true, max: deadline + 400*time.Millisecond},
		{cte: true, withDeadline: false, min: readTimeout - 50*time.Millisecond, max: 3 * readTimeout},
		{cte: false, withDeadline: true, kill: true, max: deadline + 400*time.Millisecond},
	} {
		rdb := goredis.NewClient(&goredis.Options{Addr: p.Addr, ContextTimeoutEnabled: c.cte,
			ReadTimeout: readTimeout, MaxRetries: -1})
		n, err := New(Config{PoP: "a", Limit: core.PerWindow(10, time.Minute), Redis: rdb, Margin: 0.99, Resync: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Allow(context.Background(), "warm"); err != nil { // a pooled connection
			t.Fatal(err)
		}
		if c.kill {
			if err := p.Kill(); err != nil {
				t.Fatal(err)
			}
		} else if err := p.Pause(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if c.withDeadline {
			ctx, cancel = context.WithTimeout(ctx, deadline)
		}
		start := time.Now()
		_, err = n.Allow(ctx, "k") // Margin 0.99: decided at Redis
		took := time.Since(start)
		cancel()
		if c.kill {
			if err := p.Restart(); err != nil {
				t.Fatal(err)
			}
		} else if err := p.Resume(); err != nil {
			t.Fatal(err)
		}
		t.Logf("ContextTimeoutEnabled %v, deadline %v, killed %v: %s (%v)", c.cte, c.withDeadline, c.kill, took.Round(time.Millisecond), err)
		if !errors.Is(err, core.ErrUnavailable) {
			t.Errorf("err %v; want core.ErrUnavailable", err)
		}
		if took < c.min || took > c.max {
			t.Errorf("took %s; want between %s and %s", took, c.min, c.max)
		}
		_ = n.Close(context.Background())
		rdb.Close()
	}
}
