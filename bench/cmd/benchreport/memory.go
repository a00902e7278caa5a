package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/sync/budget"
	goredis "github.com/redis/go-redis/v9"
)

// memBatch is how many identities one pipeline of the memory table writes.
const memBatch = 1000

// memRow is one row of table 3.
type memRow struct {
	name, where, note string
	perID             float64
	err               error
}

// memoryTable is table 3: Redis used_memory and Go heap grown per identity.
// Each Redis layout is written to a fresh private redis-server, so no
// layout inherits another's hash-table sizes.
func memoryTable(ctx context.Context, e *env) (section, error) {
	n := e.cfg.identities
	var rows []memRow
	ours, two, err := onFreshRedis(func(c *goredis.Client) (float64, float64, error) {
		return redis.MeasureMemoryPerIdentity(ctx, c, n)
	})
	rows = append(rows,
		memRow{name: "**edgelimit backends/redis**: one string per identity, `el:{user:NNNNNNNN}:s:100/1m`", where: "Redis", perID: ours, err: err},
		memRow{name: "article's two-key layout: `rl:user:NNNNNNNN:W` for W−1 and W", where: "Redis", perID: two, err: err})
	rr, _, err := onFreshRedis(func(c *goredis.Client) (float64, float64, error) {
		v, err := redisRateMemory(ctx, c, n)
		return v, 0, err
	})
	rows = append(rows, memRow{name: "go-redis/redis_rate/v10: one GCRA string per identity, `rate:user:NNNNNNNN`", where: "Redis", perID: rr, err: err})
	br, _, err := onFreshRedis(func(c *goredis.Client) (float64, float64, error) {
		v, err := budgetMemory(ctx, c, n)
		return v, 0, err
	})
	rows = append(rows, memRow{name: fmt.Sprintf("edgelimit sync/budget: identities past their free credit share bucketed hashes, "+
		"%s buckets (about 100 identities each) in %s groups, one PoP, a Sync after each minute's writes",
		thousands(float64(budgetBuckets(n))), thousands(float64(max(1, n/budgetGroupSize)))),
		where: "Redis", perID: br, err: err, note: "not a goal row: the budget's counting model"})
	lh, err := heapGrowth(n, func() (any, error) { return localHeap(ctx, n) })
	rows = append(rows, memRow{name: "**edgelimit backends/local** (default shards, capacity = identities)", where: "Go heap", perID: lh, err: err})
	xh, err := heapGrowth(n, func() (any, error) { return xrateHeap(n), nil })
	rows = append(rows, memRow{name: "x/time/rate, one *rate.Limiter per key in a map", where: "Go heap", perID: xh, err: err})
	return func(d *doc) { renderMemory(d, n, rows) }, nil
}

// onFreshRedis runs f against a new private redis-server, then stops it.
func onFreshRedis(f func(*goredis.Client) (float64, float64, error)) (float64, float64, error) {
	p, err := redisproc.Start()
	if err != nil {
		return 0, 0, err
	}
	defer p.Stop()
	c := p.Client()
	defer c.Close()
	return f(c)
}

// growth returns used_memory grown per identity while write runs.
func growth(ctx context.Context, c *goredis.Client, n int, write func() error) (float64, error) {
	before, err := redis.UsedMemory(ctx, c)
	if err != nil {
		return 0, err
	}
	if err := write(); err != nil {
		return 0, err
	}
	time.Sleep(300 * time.Millisecond) // let incremental rehashing finish
	after, err := redis.UsedMemory(ctx, c)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(n), nil
}

// redisRateMemory writes n identities through redis_rate's own AllowN
// (57 units of 100 per minute each), queued in pipelines.
func redisRateMemory(ctx context.Context, c *goredis.Client, n int) (float64, error) {
	lim := peers.RedisRateLimit(100, time.Minute)
	if _, err := peers.RedisRate(c, 100, time.Minute)(ctx, "warm"); err != nil { // loads the script
		return 0, err
	}
	if err := c.Del(ctx, "rate:warm").Err(); err != nil {
		return 0, err
	}
	return growth(ctx, c, n, func() error {
		for start := 0; start < n; start += memBatch {
			p := c.Pipeline()
			l := peers.RedisRateQueued(p)
			for i := start; i < min(n, start+memBatch); i++ {
				if _, err := l.AllowN(ctx, memKey(i), lim, 57); err != nil {
					return err
				}
			}
			if _, err := p.Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}

// budgetBuckets is the budget limiter's Config.Buckets in the memory
// table: about 100 identities per bucket, as Config.Buckets is sized.
func budgetBuckets(n int) int { return max(1, n/100) }

// budgetWorkers is how many goroutines write the memory table's identities
// through the budget limiter, each request one round trip.
const budgetWorkers = 16

// budgetGroupSize is about how many identities share one group (one Sync
// call) in the memory table: Config.Groups is identities ÷ budgetGroupSize,
// so a Sync call stays small however many identities the table writes.
const budgetGroupSize = 4000

// budgetMemory writes n identities through one budget Limiter (one PoP,
// 100 per minute): 43 units in the previous minute, then 57 in this one,
// each past the identity's free credit and so decided at Redis, with a
// Sync after each minute's writes; it returns Redis growth per identity.
func budgetMemory(ctx context.Context, c *goredis.Client, n int) (float64, error) {
	l, err := budget.New(budget.Config{PoP: "pop-1", Limit: core.PerWindow(100, time.Minute), PoPs: 1,
		Buckets: budgetBuckets(n), Groups: max(1, n/budgetGroupSize)}, c, nil)
	if err != nil {
		return 0, err
	}
	defer l.Close(ctx)
	now := time.Now()
	pass := func(at time.Time, units int64) error {
		errs := make([]error, budgetWorkers)
		var wg sync.WaitGroup
		for w := range budgetWorkers {
			wg.Go(func() {
				for i := w; i < n && errs[w] == nil; i += budgetWorkers {
					_, errs[w] = l.AllowN(ctx, memKey(i), at, units)
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return err
		}
		return l.Sync(ctx)
	}
	return growth(ctx, c, n, func() error {
		if err := pass(now.Add(-time.Minute), 43); err != nil {
			return err
		}
		return pass(now, 57)
	})
}

// memKey is the i-th identity of the memory table, named as
// redis.MeasureMemoryPerIdentity names them.
func memKey(i int) string { return fmt.Sprintf("user:%08d", i) }
