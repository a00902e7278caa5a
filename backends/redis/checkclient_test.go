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

// TestCheckClientByBehaviour: on a real three-master cluster, CheckClient
// accepts a cluster client and refuses a plain client to one master with a
// *RedirectError wrapping the MOVED reply, matching ErrNotClusterClient
// and core.ErrInvalid, not core.ErrUnavailable. (How a client is judged,
// wrappers included, is internal/clustercheck's TestCheckByBehaviour.)
// Caught mutations: the redirection reported as an outage or with another
// error type.
func TestCheckClientByBehaviour(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	require.NoError(t, CheckClient(ctx, cc), "a *goredis.ClusterClient")
	plain := goredis.NewClient(&goredis.Options{Addr: cl.Node(0).Addr})
	err := CheckClient(ctx, plain)
	plain.Close()
	assert.ErrorIs(t, err, ErrNotClusterClient)
	assert.ErrorIs(t, err, core.ErrInvalid)
	assert.NotErrorIs(t, err, core.ErrUnavailable)
	var re *RedirectError
	if assert.ErrorAs(t, err, &re) {
		_, moved := goredis.IsMovedError(re.Err)
		assert.True(t, moved, "wraps the MOVED reply, got %v", re.Err)
		assert.Equal(t, "redis check client", re.Op)
	}
}
