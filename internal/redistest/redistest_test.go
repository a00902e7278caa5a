package redistest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStartKillRestart(t *testing.T) {
	c, p := Client(t)
	ctx := context.Background()
	err := c.Set(ctx, "k", "v", 0).Err()
	require.NoError(t, err)
	p.Kill()
	err = c.Get(ctx, "k").Err()
	require.Error(t, err, "GET succeeded on a killed server")
	err = p.Restart()
	require.NoError(t, err)
	n, err := c.DBSize(ctx).Result()
	require.NoError(t, err, "restarted server: dbsize=%d err=%v, want empty", n, err)
	require.Equal(t, int64(0), n, "restarted server: dbsize=%d err=%v, want empty", n, err)
}
