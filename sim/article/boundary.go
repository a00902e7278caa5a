package article

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// Boundary is table A: requests admitted out of the burst, per algorithm.
type Boundary struct {
	Limit    int64 `json:"limit"`
	WindowMs int64 `json:"window_ms"`
	Sent     int64 `json:"sent"`
	Fixed    int64 `json:"fixed"`
	Sliding  int64 `json:"sliding"`
	Log      int64 `json:"log"`
}

// ArticleLimit is the article's policy: 100 per 60 s.
var ArticleLimit = core.PerWindow(100, time.Minute)

// boundaryAt is a minute boundary in the simulated past: window 0 ends and
// window 1 begins here.
const boundaryAt = int64(1_767_225_600_000) // 2026-01-01T00:00:00Z

// BurstTimes is the article's burst: Max requests in the last second before
// the boundary, one every 1000/Max ms, and Max in the first second after.
func BurstTimes(l core.Limit) []time.Time {
	step := max(1, 1000/l.Max)
	var ts []time.Time
	for _, start := range []int64{boundaryAt - 1000, boundaryAt} {
		for i := range l.Max {
			ts = append(ts, time.UnixMilli(start+i*step))
		}
	}
	return ts
}

// MeasureBoundary plays the burst through backends/redis once per
// algorithm, each under its own key prefix, and counts the admissions.
func MeasureBoundary(ctx context.Context, c goredis.UniversalClient, prefix string) (Boundary, error) {
	b := Boundary{Limit: ArticleLimit.Max, WindowMs: ArticleLimit.WindowMillis(),
		Sent: 2 * ArticleLimit.Max}
	for _, a := range []struct {
		alg core.Algorithm
		out *int64
	}{{core.FixedWindow, &b.Fixed}, {core.SlidingWindow, &b.Sliding}, {core.SlidingLog, &b.Log}} {
		l := ArticleLimit
		l.Algorithm = a.alg
		n, err := admitted(ctx, c, l, prefix+"-a")
		if err != nil {
			return b, err
		}
		*a.out = n
	}
	return b, nil
}

func admitted(ctx context.Context, c goredis.UniversalClient, l core.Limit, prefix string) (int64, error) {
	lim, err := redis.New(c, l, redis.WithPrefix(prefix))
	if err != nil {
		return 0, err
	}
	defer lim.Reset(ctx, "client")
	var n int64
	for _, t := range BurstTimes(l) {
		d, err := lim.AllowN(ctx, "client", t, 1)
		if err != nil {
			return 0, err
		}
		if d.Allowed {
			n++
		}
	}
	return n, nil
}
