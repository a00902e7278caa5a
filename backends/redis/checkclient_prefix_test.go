package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimiterCheckClientPrefix: on a real three-master cluster, a cluster
// client whose ACL user may touch only the keys of prefix "myapp" in the
// limiter's layout ("~myapp:*" for one key per identity, "~{myapp:*" for
// the bucketed layout) serves a WithPrefix("myapp") limiter, and the
// limiter's CheckClient accepts it and writes no key, while the package's
// CheckClient, which probes the default prefix's keys, gets NOPERM: a
// *core.UnavailableError. The limiter's CheckClient refuses a plain
// client to one master with a *RedirectError. Caught mutations: the method
// probing the default prefix ("el:clientcheck:<n>": NOPERM, the client
// reported unavailable), probing one layout's keys for the other's
// limiter (NOPERM), a probe that writes, a redirection reported as an
// outage.
func TestLimiterCheckClientPrefix(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	lim := core.PerWindow(10, time.Second)
	for _, c := range []struct {
		user, keys string
		opts       []Option
	}{
		{"perkey", "~myapp:*", []Option{WithPrefix("myapp")}},
		{"bucketed", "~{myapp:*", []Option{WithPrefix("myapp"), WithBuckets(64)}},
	} {
		rdb := redistest.ClusterUser(t, cc, cl, c.user, c.keys, "+@all")
		l := newLimiter(t, rdb, lim, c.opts...)
		require.NoError(t, l.CheckClient(ctx), "%s: a cluster client whose user may touch the limiter's keys", c.user)
		assert.Zero(t, redistest.ClusterDBSize(t, cc), "%s: keys written by the check", c.user)
		err := CheckClient(ctx, rdb)
		assert.ErrorIs(t, err, core.ErrUnavailable, "%s: the package's CheckClient probes the default prefix", c.user)
		assert.ErrorContains(t, err, "NOPERM", c.user)
		d, err := l.AllowN(ctx, "user:1", time.Now(), 1)
		require.NoError(t, err, "%s: the user may run the limiter", c.user)
		require.True(t, d.Allowed, c.user)
		redistest.FlushCluster(t, cc)
	}

	plain := goredis.NewClient(&goredis.Options{Addr: cl.Node(0).Addr})
	t.Cleanup(func() { plain.Close() })
	err := newLimiter(t, plain, lim, WithPrefix("myapp")).CheckClient(ctx)
	assert.ErrorIs(t, err, ErrNotClusterClient, "a plain client to one master")
	assert.NotErrorIs(t, err, core.ErrUnavailable, "a plain client to one master")
	var re *RedirectError
	if assert.ErrorAs(t, err, &re) {
		assert.Equal(t, "redis check client", re.Op)
	}
}
