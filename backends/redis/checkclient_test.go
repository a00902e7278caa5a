package redis

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instrumented is a user's own client type wrapping a cluster client (as
// an instrumentation or circuit-breaker layer does): it follows the
// cluster's redirections, since every call goes through the embedded
// *goredis.ClusterClient, but it is not one.
type instrumented struct{ *goredis.ClusterClient }

// TestCheckClientByBehaviour: on a real three-master cluster, CheckClient
// judges a client by what it does with keys of every master, not by its
// Go type. A wrapper of a cluster client is accepted; a plain client to
// any one master is refused with a *RedirectError wrapping the MOVED
// reply, whichever master it is. Caught mutations: deciding by the
// client's type (the wrapper refused), probing only the slots of the node
// that answers CLUSTER SLOTS (the plain client accepted), taking any
// reply for a redirection (the cluster client refused).
func TestCheckClientByBehaviour(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	require.NoError(t, CheckClient(ctx, cc), "a *goredis.ClusterClient")
	require.NoError(t, CheckClient(ctx, instrumented{cc}), "a type of the user's embedding a *goredis.ClusterClient")
	for i := 0; i < cl.Masters(); i++ {
		plain := goredis.NewClient(&goredis.Options{Addr: cl.Node(i).Addr})
		err := CheckClient(ctx, plain)
		plain.Close()
		assert.ErrorIs(t, err, ErrNotClusterClient, "a plain client to node %d", i)
		assert.ErrorIs(t, err, core.ErrInvalid, "a plain client to node %d", i)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "a plain client to node %d", i)
		var re *RedirectError
		if assert.ErrorAs(t, err, &re, "a plain client to node %d", i) {
			_, moved := goredis.IsMovedError(re.Err)
			assert.True(t, moved, "a plain client to node %d: wraps the MOVED reply, got %v", i, re.Err)
		}
	}
	assert.Zero(t, redistest.ClusterDBSize(t, cc), "keys written by the checks")
}
