package main

import (
	"context"
	"fmt"
	"log"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// callerCounts are the concurrent callers measured.
var callerCounts = []int{1, 8, 64}

// newClient is a pooled client with ContextTimeoutEnabled, as the README
// recommends for a limiter.
func newClient(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: 128, ContextTimeoutEnabled: true})
}

// measureThroughput warms every identity in both layouts (so decisions
// find state, as at steady traffic), then measures each caller count's
// decisions per second for both layouts in interleaved rounds.
func measureThroughput(ctx context.Context, c *goredis.Client, cfg settings) ([]throughput, error) {
	lim := core.PerWindow(1_000_000_000, time.Hour) // every call admitted: the counting path
	perID, err := redis.New(c, lim, redis.WithBuckets(0))
	if err != nil {
		return nil, err
	}
	bucketed, err := redis.New(c, lim, redis.WithBuckets(cfg.buckets))
	if err != nil {
		return nil, err
	}
	ids := make([]string, cfg.identities)
	for i := range ids {
		ids[i] = fmt.Sprintf("user:%08d", i)
	}
	log.Printf("throughput: warming %d identities in both layouts", len(ids))
	for _, l := range []*redis.Limiter{perID, bucketed} {
		out := make([]core.Decision, 1000)
		for start := 0; start < len(ids); start += 1000 {
			asks := make([]redis.Ask, 0, 1000)
			for _, id := range ids[start:min(len(ids), start+1000)] {
				asks = append(asks, redis.Ask{Key: id, Now: time.Now(), N: 1})
			}
			if err := l.AllowEach(ctx, asks, out); err != nil {
				return nil, err
			}
		}
	}
	var res []throughput
	for _, callers := range callerCounts {
		var a, b, sa, sb, ratios []float64
		for r := 0; r < cfg.rounds; r++ {
			log.Printf("throughput: %d callers, round %d of %d", callers, r+1, cfg.rounds)
			for k := 0; k < 2; k++ {
				i := k ^ (r & 1) // alternate which layout goes first, so drift favours neither
				l := []*redis.Limiter{perID, bucketed}[i]
				rate, us, err := measureOnce(ctx, c, l, ids, callers, cfg.span)
				if err != nil {
					return nil, err
				}
				if i == 0 {
					a, sa = append(a, rate), append(sa, us)
				} else {
					b, sb = append(b, rate), append(sb, us)
				}
			}
			ratios = append(ratios, b[len(b)-1]/a[len(a)-1])
		}
		t := throughput{Callers: callers, PerIdentity: median(a), Bucketed: median(b),
			ScriptUsPerID: median(sa), ScriptUsBuckets: median(sb)}
		t.Ratio = median(ratios)
		res = append(res, t)
	}
	return res, nil
}

// measureOnce runs callers goroutines deciding on ids in turn for span and
// returns decisions per second and Redis' microseconds per EVALSHA.
func measureOnce(ctx context.Context, c *goredis.Client, l *redis.Limiter, ids []string, callers int, span time.Duration) (float64, float64, error) {
	if err := c.ConfigResetStat(ctx).Err(); err != nil {
		return 0, 0, err
	}
	var next, done atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < callers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := next.Add(7919) % int64(len(ids)) // a stride prime to the count: every identity in turn, scattered
				if _, err := l.Allow(ctx, ids[i]); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
			}
		}()
	}
	time.Sleep(span)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	if err, ok := firstErr.Load().(error); ok {
		return 0, 0, err
	}
	us, err := evalshaMicros(ctx, c)
	return float64(done.Load()) / elapsed.Seconds(), us, err
}

// evalshaMicros reads usec_per_call of EVALSHA from INFO commandstats.
func evalshaMicros(ctx context.Context, c *goredis.Client) (float64, error) {
	info, err := c.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "usec_per_call="); ok {
				return strconv.ParseFloat(v, 64)
			}
		}
	}
	return 0, fmt.Errorf("no cmdstat_evalsha in INFO commandstats")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}
