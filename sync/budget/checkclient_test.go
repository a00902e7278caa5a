package budget

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wrappedCluster is a user's own client type around a cluster client (an
// instrumentation layer): it follows redirections, but is not a
// *redis.ClusterClient.
type wrappedCluster struct{ *redis.ClusterClient }

// TestCheckClient: on a real three-master cluster, CheckClient accepts a
// cluster client and a type wrapping one, and refuses a plain client to
// any one master with a *RedirectError wrapping the MOVED reply (matching
// ErrNotClusterClient and core.ErrInvalid, not core.ErrUnavailable); on a
// server not in cluster mode it accepts a plain client, and reports it
// unavailable once the server is killed; a nil client is invalid. Caught
// mutations: deciding by the client's Go type (the wrapper refused), the
// redirection reported as an outage, an outage reported as a redirection.
func TestCheckClient(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	require.NoError(t, CheckClient(ctx, cc), "a *redis.ClusterClient")
	require.NoError(t, CheckClient(ctx, wrappedCluster{cc}), "a type wrapping a *redis.ClusterClient")
	for i := 0; i < cl.Masters(); i++ {
		plain := redis.NewClient(&redis.Options{Addr: cl.Node(i).Addr})
		err := CheckClient(ctx, plain)
		plain.Close()
		assert.ErrorIs(t, err, ErrNotClusterClient, "a plain client to node %d", i)
		assert.ErrorIs(t, err, core.ErrInvalid, "a plain client to node %d", i)
		assert.NotErrorIs(t, err, core.ErrUnavailable, "a plain client to node %d", i)
		var re *RedirectError
		if assert.ErrorAs(t, err, &re, "a plain client to node %d", i) {
			_, moved := redis.IsMovedError(re.Err)
			assert.True(t, moved, "a plain client to node %d: wraps the MOVED reply, got %v", i, re.Err)
			assert.Equal(t, "budget check client", re.Op)
		}
	}
	assert.Zero(t, redistest.ClusterDBSize(t, cc), "keys written by the checks")

	single, p := redistest.Client(t)
	require.NoError(t, CheckClient(ctx, single), "a plain client of a server not in cluster mode")
	require.NoError(t, p.Kill())
	err := CheckClient(ctx, single)
	assert.ErrorIs(t, err, core.ErrUnavailable, "a killed server")
	assert.NotErrorIs(t, err, ErrNotClusterClient, "a killed server")
	var nilClient *redis.Client
	assert.ErrorIs(t, CheckClient(ctx, nilClient), core.ErrInvalid, "a nil client")
}
