package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/envoy/service"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckClientPrefixACL: on a real three-master cluster, a cluster
// client whose ACL user may touch only the keys of prefix "myapp" of one
// backend ("~myapp:*" for the redis backend, "~{myapp-*" for the budget
// backend's Namespace-<max>-<window ms> hash tags) passes that backend's
// CheckClient and serves its limiters, while a redis backend of the
// default prefix on the same user is refused with NOPERM (a
// *core.UnavailableError); a plain client of one node is refused by both
// backends as a redirection (core.ErrNotClusterClient). Caught mutations:
// a check reading the default prefix's keys ("el:clientcheck:<n>",
// NOPERM), or the redis backend's key shape for the budget backend.
func TestCheckClientPrefixACL(t *testing.T) {
	_, cl := redistest.Cluster(t)
	ctx := context.Background()
	user := func(name, keys string) goredis.UniversalClient {
		for i, addr := range cl.Addrs() {
			c := cl.Node(i).Client()
			err := c.Do(ctx, "ACL", "SETUSER", name, "on", ">s3cret", keys, "+@all").Err()
			c.Close()
			require.NoError(t, err, "ACL SETUSER %s on %s", name, addr)
		}
		rdb, err := service.NewRedisClient(service.RedisClientOptions{Addrs: cl.Addrs(), Cluster: true,
			Username: name, Password: "s3cret", Timeout: 2 * time.Second})
		require.NoError(t, err)
		t.Cleanup(func() { rdb.Close() })
		return rdb
	}
	perKey, tagged := user("perkey", "~myapp:*"), user("tagged", "~{myapp-*")
	lim := core.PerWindow(10, time.Minute)

	rb := service.NewRedis(perKey, service.RedisOptions{Prefix: "myapp"})
	t.Cleanup(func() { rb.Close(ctx) })
	require.NoError(t, rb.CheckClient(ctx), "redis backend, prefix myapp, user of ~myapp:*")
	l, done, err := rb.Acquire(lim)
	require.NoError(t, err)
	defer done()
	_, err = l.Allow(ctx, "user:1")
	require.NoError(t, err, "the user may run the redis backend")

	bb := service.NewBudget(service.BudgetOptions{PoP: "a", Redis: tagged, PoPs: 1, Namespace: "myapp", Sync: time.Hour})
	t.Cleanup(func() { bb.Close(ctx) })
	require.NoError(t, bb.CheckClient(ctx), "budget backend, Namespace myapp, user of ~{myapp-*")
	l, done, err = bb.Acquire(lim)
	require.NoError(t, err)
	defer done()
	for i := 0; i < 3; i++ { // past the free credit: decided at Redis
		_, err = l.Allow(ctx, "user:1")
		require.NoError(t, err, "the user may run the budget backend")
	}

	err = service.NewRedis(perKey, service.RedisOptions{}).CheckClient(ctx)
	assert.ErrorIs(t, err, core.ErrUnavailable, "redis backend of the default prefix, user of ~myapp:*")
	assert.ErrorContains(t, err, "NOPERM")

	plain, err := service.NewRedisClient(service.RedisClientOptions{Addrs: cl.Addrs()[:1], Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { plain.Close() })
	assert.ErrorIs(t, service.NewRedis(plain, service.RedisOptions{Prefix: "myapp"}).CheckClient(ctx), core.ErrNotClusterClient, "redis backend, plain client of one node")
	assert.ErrorIs(t, service.NewBudget(service.BudgetOptions{PoP: "a", Redis: plain, PoPs: 1, Namespace: "myapp"}).CheckClient(ctx),
		core.ErrNotClusterClient, "budget backend, plain client of one node")
}
