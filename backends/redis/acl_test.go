package redis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
)

// TestRedisACLPassesThrough: Redis ACL credentials are the go-redis
// client's own options, so the limiter works unchanged against a server
// whose default user is disabled, and a client without credentials gets
// the fail-mode decision with ErrUnavailable, not a panic or a stall.
func TestRedisACLPassesThrough(t *testing.T) {
	admin, p := redistest.Client(t)
	ctx := context.Background()
	must := func(args ...any) {
		t.Helper()
		if err := admin.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	must("ACL", "SETUSER", "edge", "on", ">s3cret", "~el:*", "+@all")
	must("ACL", "SETUSER", "default", "off")

	lim := core.PerWindow(3, time.Minute)
	authed := goredis.NewClient(&goredis.Options{Addr: p.Addr, Username: "edge", Password: "s3cret"})
	defer authed.Close()
	l, err := New(authed, lim)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 0; i < 3; i++ {
		if d, err := l.AllowN(ctx, "user:1", now, 1); err != nil || !d.Allowed {
			t.Fatalf("request %d as ACL user: %+v %v", i, d, err)
		}
	}
	if d, err := l.AllowN(ctx, "user:1", now, 1); err != nil || d.Allowed {
		t.Fatalf("4th request as ACL user: %+v %v, want denied", d, err)
	}

	anon := goredis.NewClient(&goredis.Options{Addr: p.Addr, MaxRetries: -1})
	defer anon.Close()
	la, err := New(anon, lim, WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	d, err := la.AllowN(ctx, "user:2", now, 1)
	if !errors.Is(err, core.ErrUnavailable) || d.Allowed || d.Source != core.SourceFailClosed {
		t.Fatalf("no credentials: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	}
}
