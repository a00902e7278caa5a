package article

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"

	"github.com/stretchr/testify/require"
)

func TestBoundaryOnRedis(t *testing.T) {
	c, _ := redistest.Client(t)
	b, err := MeasureBoundary(context.Background(), c, "t")
	require.NoError(t, err)
	require.False(t, b.Limit != 100 || b.Fixed != 200 || b.Log != 100 || b.Sliding < 100 || b.Sliding > 105, "table A %+v: want fixed 200, sliding 100..105, log 100", b)
}

func TestKeyBytesGrowWithTheLog(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	logLimit := ArticleLimit
	logLimit.Max, logLimit.Algorithm = 500, core.SlidingLog
	logBytes, err := keyBytes(ctx, c, logLimit, "t", 500)
	require.NoError(t, err)
	sliding, err := keyBytes(ctx, c, ArticleLimit, "t", 500)
	require.NoError(t, err)
	require.False(t, sliding <= 0 || sliding > 200 || logBytes < 100*sliding, "log %d bytes, sliding %d: want a small counter and a log ≥ 100× bigger", logBytes, sliding)
	n, _ := c.DBSize(ctx).Result()
	require.EqualValues(t, 0, n, "%d keys left behind", n)
}
