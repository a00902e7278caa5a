package redistest

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// ClusterUser creates the ACL user name on every node of cl (ACL SETUSER
// name on >s3cret-<name> followed by rules, such as "~myapp:*" and
// "+@all"), sent through admin, a cluster client of cl whose user may
// run ACL SETUSER, and returns a new cluster client of cl logged in as
// name, closed in t.Cleanup. It fails the test when a node refuses.
func ClusterUser(t testing.TB, admin *redis.ClusterClient, cl *redisproc.Cluster, name string, rules ...string) *redis.ClusterClient {
	t.Helper()
	args := []any{"ACL", "SETUSER", name, "on", ">s3cret-" + name}
	for _, r := range rules {
		args = append(args, r)
	}
	err := admin.ForEachShard(context.Background(), func(ctx context.Context, n *redis.Client) error {
		return n.Do(ctx, args...).Err()
	})
	require.NoError(t, err, "ACL SETUSER %s on every node", name)
	opts := cl.Options()
	opts.Username, opts.Password = name, "s3cret-"+name
	c := redis.NewClusterClient(opts)
	t.Cleanup(func() { c.Close() })
	return c
}
