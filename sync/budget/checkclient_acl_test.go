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

// TestCheckClientLimiterACL: on a real three-master cluster, a cluster
// client whose ACL user may touch only the default Namespace's keys
// ("{el:*", every key's hash tag) and run every command serves a Limiter,
// and CheckClient accepts it. Caught mutation: probe keys outside the
// limiter's key shape ("el:clientcheck:<n>", which "~{el:*" does not
// match): NOPERM, reported as Redis unavailable.
func TestCheckClientLimiterACL(t *testing.T) {
	cc, cl := redistest.Cluster(t)
	ctx := context.Background()
	err := cc.ForEachShard(ctx, func(ctx context.Context, n *redis.Client) error {
		return n.Do(ctx, "ACL", "SETUSER", "budget", "on", ">s3cret", "~{el:*", "+@all").Err()
	})
	require.NoError(t, err, "ACL SETUSER on every node")
	opts := cl.Options()
	opts.Username, opts.Password = "budget", "s3cret"
	rdb := redis.NewClusterClient(opts)
	t.Cleanup(func() { rdb.Close() })

	l, err := New(Config{PoP: "a", Limit: core.PerWindow(10, time.Second), PoPs: 2}, rdb, nil)
	require.NoError(t, err)
	d, err := l.AllowN(ctx, "k", time.Now(), 1)
	require.NoError(t, err, "the user may run the Limiter")
	require.True(t, d.Allowed)
	require.NoError(t, l.Sync(ctx), "and its Syncs")

	assert.NoError(t, CheckClient(ctx, rdb), "a cluster client whose user may touch the limiter's keys")
}
