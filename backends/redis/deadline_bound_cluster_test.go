package redis

import (
	"context"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestDeadlineBoundClusterStalled: a Limiter on a Redis Cluster client
// with ContextTimeoutEnabled whose masters are stopped either says it is
// not DeadlineBound or sets no socket read of a decision past the
// decision's context deadline, and says it is exactly when go-redis'
// routing policies are off (redistest.DeadlineOnStalledCluster: with them
// on, the client's command-table lookup waits 5 s whatever the caller's
// deadline). Mutation caught: DeadlineBound true for any cluster client
// with ContextTimeoutEnabled.
func TestDeadlineBoundClusterStalled(t *testing.T) {
	redistest.DeadlineOnStalledCluster(t, func(t *testing.T, cc *goredis.ClusterClient) redistest.StalledDecider {
		l, err := New(cc, core.PerWindow(10, time.Minute))
		require.NoError(t, err)
		return redistest.StalledDecider{
			Decide:        func(ctx context.Context) error { _, err := l.Allow(ctx, "user:1"); return err },
			DeadlineBound: l.DeadlineBound,
		}
	})
}
