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
//
// No upper bound in wall time: where the claim is "the ctx ends the call"
// every other timeout of the client is an hour, so a call that returns at
// all was ended by its ctx (or by the refusal), and a wrong claim hangs the
// test. Where the claim is "the ctx does not end it", the call must last at
// least ReadTimeout, a lower bound that load only makes easier to meet
// (the read deadline is set after the call starts).
func TestRedisCallBoundedByContextOnlyWithContextTimeout(t *testing.T) {
	const readTimeout, deadline = time.Second, 100 * time.Millisecond
	p := redistest.Start(t)
	for _, c := range []struct {
		cte, withDeadline, kill bool
		read, dial              time.Duration // the client's ReadTimeout and DialTimeout
		min                     time.Duration // the call lasts at least this
	}{
		{cte: false, withDeadline: true, read: readTimeout, dial: time.Hour, min: readTimeout},
		{cte: true, withDeadline: true, read: time.Hour, dial: time.Hour, min: deadline},
		{cte: true, withDeadline: false, read: readTimeout, dial: time.Hour, min: readTimeout},
		{cte: false, withDeadline: true, kill: true, read: time.Hour, dial: time.Hour},
	} {
		rdb := goredis.NewClient(&goredis.Options{Addr: p.Addr, ContextTimeoutEnabled: c.cte,
			ReadTimeout: c.read, WriteTimeout: c.read, DialTimeout: c.dial, PoolTimeout: time.Hour, MaxRetries: -1})
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
		took := time.Since(start)  // measured for the lower bound and the log only
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
		if took < c.min {
			t.Errorf("took %s; want at least %s", took, c.min)
		}
		_ = n.Close(context.Background())
		rdb.Close()
	}
}
