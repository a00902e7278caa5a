package main

import (
	"context"
	"strings"
	"testing"

	"github.com/edgelimit/edgelimit/internal/redistest"
	goredis "github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// TestQuietServer: once quietServer has run, the server keeps no latency
// histogram of the commands it runs (INFO latencystats lists none) and no
// slowlog entry, however slow the call; before it, the same commands
// leave both. Catches: a meter whose used_memory counts Redis' own
// records of commands (0.7 MB on the budget mode's 1,000,000-identity
// run, 20 B per identity with state) as the limiter's state.
func TestQuietServer(t *testing.T) {
	ctx := context.Background()
	p := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: p.Addr})
	t.Cleanup(func() { _ = c.Close() })
	info := func() int {
		s, err := c.Info(ctx, "latencystats").Result()
		require.NoError(t, err)
		return strings.Count(s, "latency_percentiles_usec_hset")
	}
	// before: the server records both
	require.NoError(t, c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err())
	require.NoError(t, c.HSet(ctx, "quiet:h", "f", 1).Err())
	require.Equal(t, 1, info(), "latency tracking is on by default")
	n, err := c.SlowLogLen(ctx).Result()
	require.NoError(t, err)
	require.Positive(t, n, "a call slower than 0 µs is logged")

	require.NoError(t, quietServer(ctx, p.Addr))
	require.NoError(t, c.ConfigResetStat(ctx).Err()) // frees the histograms recorded so far
	require.NoError(t, c.SlowLogReset(ctx).Err())
	require.NoError(t, c.HSet(ctx, "quiet:h", "f", 2).Err())
	require.Equal(t, 0, info(), "no histogram once quieted")
	n, err = c.SlowLogLen(ctx).Result()
	require.NoError(t, err)
	require.Zero(t, n, "no slowlog entry once quieted")
}
