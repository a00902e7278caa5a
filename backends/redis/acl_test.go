package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
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
		err := admin.Do(ctx, args...).Err()
		require.NoError(t, err, "%v", args)
	}
	must("ACL", "SETUSER", "edge", "on", ">s3cret", "~el:*", "+@all")
	must("ACL", "SETUSER", "default", "off")

	lim := core.PerWindow(3, time.Minute)
	authed := goredis.NewClient(&goredis.Options{Addr: p.Addr, Username: "edge", Password: "s3cret"})
	defer authed.Close()
	l, err := New(authed, lim)
	require.NoError(t, err)
	now := time.Now()
	for i := 0; i < 3; i++ {
		d, err := l.AllowN(ctx, "user:1", now, 1)
		require.NoError(t, err, "request %d as ACL user: %+v %v", i, d, err)
		require.True(t, d.Allowed, "request %d as ACL user: %+v %v", i, d, err)
	}
	d, err := l.AllowN(ctx, "user:1", now, 1)
	require.NoError(t, err, "4th request as ACL user: %+v, want denied", d)
	require.False(t, d.Allowed, "4th request as ACL user: %+v, want denied", d)

	anon := goredis.NewClient(&goredis.Options{Addr: p.Addr, MaxRetries: -1})
	defer anon.Close()
	la, err := New(anon, lim, WithTimeout(500*time.Millisecond))
	require.NoError(t, err)
	d, err = la.AllowN(ctx, "user:2", now, 1)
	require.ErrorIs(t, err, core.ErrUnavailable, "no credentials: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	require.False(t, d.Allowed, "no credentials: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
	require.Equal(t, core.SourceFailClosed, d.Source, "no credentials: %+v %v, want a fail-closed denial with ErrUnavailable", d, err)
}
