package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"

	"github.com/stretchr/testify/require"
)

// TestBudgetOnAClusterSpreadsItsGroups: on a Redis Cluster the budget
// mode's Machines are configured as budget.New configures a Limiter on a
// cluster client (16 groups, each its own hash tag), so the run's keys
// spread over the masters as a deployment's do, and its Redis load,
// memory and round trips are those of the code users run. It catches
// Machines built with Groups 0 (one group, every key on one master) while
// the Limiter would use 16.
func TestBudgetOnAClusterSpreadsItsGroups(t *testing.T) {
	admin, cl := redistest.Cluster(t)
	e := testEnv(t, "mixed")
	e.RedisAddr = strings.Join(cl.Addrs(), ",")
	_, err := Run(context.Background(), e, "budget")
	require.NoError(t, err)
	var mu sync.Mutex
	masters := 0
	err = admin.ForEachMaster(context.Background(), func(ctx context.Context, m *goredis.Client) error {
		keys, err := m.Keys(ctx, "{"+e.Namespace+":*").Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if len(keys) > 0 {
			masters++
		}
		return nil
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, masters, 2, "the budget mode's keys lie on %d of 3 masters; a Limiter's 16 groups spread over them", masters)
}
