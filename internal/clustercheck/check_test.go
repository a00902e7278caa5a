package clustercheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// errRedirected is what Check's redirected callback returns in these tests.
var errRedirected = errors.New("redirected")

func check(ctx context.Context, c goredis.UniversalClient) error {
	return Check(ctx, c, PlainKey, "check", func(reply error) error {
		if !IsRedirect(reply) {
			return reply
		}
		return errRedirected
	})
}

// TestCheckSingleMasterCluster: a plain client of a cluster whose one
// master owns every slot is never redirected, so Check accepts it.
// Caught mutation: refusing every plain client of a cluster-mode server
// (the cluster_enabled:1 rule Check replaced).
func TestCheckSingleMasterCluster(t *testing.T) {
	node := startClusterNode(t)
	ctx := context.Background()
	require.NoError(t, node.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, Slots-1).Err(), "CLUSTER ADDSLOTSRANGE")
	waitClusterOK(t, node)
	assert.NoError(t, check(ctx, node), "a plain client of a one-master cluster")
}

// TestCheckUnavailable: a plain client of a killed server, and a context
// already done, are unavailable (core.ErrUnavailable), never a
// redirection; a nil client and a nil *goredis.Client are invalid.
func TestCheckUnavailable(t *testing.T) {
	c, p := redistest.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := check(ctx, c)
	assert.ErrorIs(t, err, core.ErrUnavailable, "a done context")
	require.NoError(t, p.Kill())
	err = check(context.Background(), c)
	assert.ErrorIs(t, err, core.ErrUnavailable, "a killed server")
	assert.NotErrorIs(t, err, errRedirected, "a killed server")
	assert.ErrorIs(t, check(context.Background(), nil), core.ErrInvalid, "a nil client")
	var nilClient *goredis.Client
	assert.ErrorIs(t, check(context.Background(), nilClient), core.ErrInvalid, "a nil *goredis.Client")
}

// startClusterNode starts a private redis-server in cluster mode that
// belongs to no cluster yet (no slot assigned) and returns a plain client
// to it, both stopped in t.Cleanup.
func startClusterNode(t *testing.T) *goredis.Client {
	t.Helper()
	p, err := redisproc.Start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	require.NoError(t, err, "this test needs a real Redis")
	t.Cleanup(func() { p.Stop() })
	c := p.Client()
	t.Cleanup(func() { c.Close() })
	return c
}

// waitClusterOK waits until node reports cluster_state:ok: a master
// whose slots were just assigned turns ok only after its writable delay
// (2 s in Redis 7), which no event announces, so this polls, bounded by
// 600 polls.
func waitClusterOK(t *testing.T, node *goredis.Client) {
	t.Helper()
	var info string
	for i := 0; i < 600; i++ {
		var err error
		info, err = node.ClusterInfo(context.Background()).Result()
		require.NoError(t, err, "CLUSTER INFO")
		if strings.Contains(info, "cluster_state:ok") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	require.FailNow(t, "the one-node cluster never turned ok", "%s", info)
}

// wrapped is a user's own client type around a cluster client (an
// instrumentation layer): it follows redirections, but is not a
// *goredis.ClusterClient.
type wrapped struct{ *goredis.ClusterClient }

// TestCheckByBehaviour: on a real three-master cluster, Check judges a
// client by what it does with keys of every master, not by its Go type:
// a cluster client and a type wrapping one pass, a plain client to any one
// master is redirected, and no key is written. Caught mutations: deciding
// by the client's type (the wrapper refused), probing only the slots of
// the node that answers CLUSTER SLOTS (the plain client accepted), taking
// any reply for a redirection (the cluster client refused). (Each
// limiter's CheckClient test checks its own error type on top.)
func TestCheckByBehaviour(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	require.NoError(t, check(ctx, cc), "a *goredis.ClusterClient")
	require.NoError(t, check(ctx, wrapped{cc}), "a type of the user's embedding a *goredis.ClusterClient")
	for i := 0; i < cl.Masters(); i++ {
		plain := goredis.NewClient(&goredis.Options{Addr: cl.Node(i).Addr})
		err := check(ctx, plain)
		plain.Close()
		assert.ErrorIs(t, err, errRedirected, "a plain client to node %d", i)
	}
	assert.Zero(t, redistest.ClusterDBSize(t, cc), "keys written by the checks")
}
