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

// TestCheckClient: on a real three-master cluster, CheckClient accepts a
// cluster client and refuses a plain client to one master with a
// *RedirectError wrapping the MOVED reply (matching ErrNotClusterClient
// and core.ErrInvalid, not core.ErrUnavailable); on a server not in
// cluster mode it accepts a plain client, and reports it unavailable once
// the server is killed; a nil client is invalid. (How a client is judged,
// wrappers included, is internal/clustercheck's TestCheckByBehaviour.)
// Caught mutations: the redirection reported as an outage, an outage
// reported as a redirection, another error type.
func TestCheckClient(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	require.NoError(t, CheckClient(ctx, cc), "a *redis.ClusterClient")
	plain := redis.NewClient(&redis.Options{Addr: cl.Node(0).Addr})
	err := CheckClient(ctx, plain)
	plain.Close()
	assert.ErrorIs(t, err, ErrNotClusterClient)
	assert.ErrorIs(t, err, core.ErrInvalid)
	assert.NotErrorIs(t, err, core.ErrUnavailable)
	var re *RedirectError
	if assert.ErrorAs(t, err, &re) {
		_, moved := redis.IsMovedError(re.Err)
		assert.True(t, moved, "wraps the MOVED reply, got %v", re.Err)
		assert.Equal(t, "budget check client", re.Op)
	}

	single, p := redistest.Client(t)
	require.NoError(t, CheckClient(ctx, single), "a plain client of a server not in cluster mode")
	require.NoError(t, p.Kill())
	err = CheckClient(ctx, single)
	assert.ErrorIs(t, err, core.ErrUnavailable, "a killed server")
	assert.NotErrorIs(t, err, ErrNotClusterClient, "a killed server")
	var nilClient *redis.Client
	assert.ErrorIs(t, CheckClient(ctx, nilClient), core.ErrInvalid, "a nil client")
}
