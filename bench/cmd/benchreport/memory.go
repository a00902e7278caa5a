package main

import (
	"context"
	"fmt"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/bench/peers"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	goredis "github.com/redis/go-redis/v9"
)

// memBatch is how many identities one pipeline of the memory table writes.
const memBatch = 1000

// memRow is one row of table 4.
type memRow struct {
	name, where, note string
	perID             float64
	err               error
}

// memoryTable is table 4: Redis used_memory and Go heap grown per identity.
// Each Redis layout is written to a fresh private redis-server, so no
// layout inherits another's hash-table sizes.
func memoryTable(ctx context.Context, e *env) (section, error) {
	n := e.cfg.identities
	var rows []memRow
	ours, two, err := onFreshRedis(func(c *goredis.Client) (float64, float64, error) {
		return redis.MeasureMemoryPerIdentity(ctx, c, n)
	})
	rows = append(rows,
		memRow{name: "**edgelimit backends/redis**: one string per identity, `el:{user:NNNNNNNN}:s`", where: "Redis", perID: ours, err: err},
		memRow{name: "article's two-key layout: `rl:user:NNNNNNNN:W` for W−1 and W", where: "Redis", perID: two, err: err})
	rr, _, err := onFreshRedis(func(c *goredis.Client) (float64, float64, error) {
		v, err := redisRateMemory(ctx, c, n)
		return v, 0, err
	})
	rows = append(rows, memRow{name: "go-redis/redis_rate/v10: one GCRA string per identity, `rate:user:NNNNNNNN`", where: "Redis", perID: rr, err: err})
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

// memKey is the i-th identity of the memory table, named as
// redis.MeasureMemoryPerIdentity names them.
func memKey(i int) string { return fmt.Sprintf("user:%08d", i) }
