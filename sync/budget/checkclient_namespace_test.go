package budget

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimiterCheckClientNamespace: on a real three-master cluster, a
// cluster client whose ACL user may touch only the keys of Namespace
// "myapp" ("~{myapp:*") serves a Limiter of that Namespace, and the
// Limiter's CheckClient accepts it and writes no key, while the package's
// CheckClient, which probes the default Namespace's keys, gets NOPERM: a
// *core.UnavailableError. The Limiter's CheckClient refuses a plain client
// to one master with a *RedirectError, and returns ErrClosed after Close.
// Caught mutations: the method probing the default Namespace's keys
// ("{el:clientcheck:<n>}": NOPERM, the client reported unavailable),
// probe keys outside the limit's hash tag, a probe that writes, a
// redirection reported as an outage.
func TestLimiterCheckClientNamespace(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	rdb := redistest.ClusterUser(t, cc, cl, "myapp", "~{myapp:*", "+@all")
	cfg := Config{PoP: "a", Limit: core.PerWindow(10, time.Second), PoPs: 2, Namespace: "myapp"}
	l, err := New(cfg, rdb, nil)
	require.NoError(t, err)

	require.NoError(t, l.CheckClient(ctx), "a cluster client whose user may touch the Namespace's keys")
	assert.Zero(t, redistest.ClusterDBSize(t, cc), "keys written by the check")
	err = CheckClient(ctx, rdb)
	assert.ErrorIs(t, err, core.ErrUnavailable, "the package's CheckClient probes the default Namespace")
	assert.ErrorContains(t, err, "NOPERM")

	d, err := l.AllowN(ctx, "k", time.Now(), 1)
	require.NoError(t, err, "the user may run the Limiter")
	require.True(t, d.Allowed)
	require.NoError(t, l.Sync(ctx), "and its Syncs")

	plain := redis.NewClient(&redis.Options{Addr: cl.Node(0).Addr})
	t.Cleanup(func() { plain.Close() })
	lp, err := New(cfg, plain, nil)
	require.NoError(t, err)
	err = lp.CheckClient(ctx)
	assert.ErrorIs(t, err, ErrNotClusterClient, "a plain client to one master")
	assert.NotErrorIs(t, err, core.ErrUnavailable, "a plain client to one master")
	var re *RedirectError
	if assert.ErrorAs(t, err, &re) {
		assert.Equal(t, "budget check client", re.Op)
	}

	require.NoError(t, l.Close(ctx))
	assert.ErrorIs(t, l.CheckClient(ctx), ErrClosed, "after Close")
}
