package article

import (
	"context"
	"testing"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redistest"
)

func TestBoundaryOnRedis(t *testing.T) {
	c, _ := redistest.Client(t)
	b, err := MeasureBoundary(context.Background(), c, "t")
	if err != nil {
		t.Fatal(err)
	}
	if b.Limit != 100 || b.Fixed != 200 || b.Log != 100 || b.Sliding < 100 || b.Sliding > 105 {
		t.Fatalf("table A %+v: want fixed 200, sliding 100..105, log 100", b)
	}
}

func TestKeyBytesGrowWithTheLog(t *testing.T) {
	c, _ := redistest.Client(t)
	ctx := context.Background()
	logLimit := ArticleLimit
	logLimit.Max, logLimit.Algorithm = 500, core.SlidingLog
	logBytes, err := keyBytes(ctx, c, logLimit, "t", 500)
	if err != nil {
		t.Fatal(err)
	}
	sliding, err := keyBytes(ctx, c, ArticleLimit, "t", 500)
	if err != nil {
		t.Fatal(err)
	}
	if sliding <= 0 || sliding > 200 || logBytes < 100*sliding {
		t.Fatalf("log %d bytes, sliding %d: want a small counter and a log ≥ 100× bigger", logBytes, sliding)
	}
	if n, _ := c.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("%d keys left behind", n)
	}
}
