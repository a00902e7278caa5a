package main

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// quietServer turns off, on a redis-server pop-sim started itself, the two
// records Redis keeps of the commands it runs, which used_memory counts
// though they hold no limiter state: the per-command latency histograms
// (latency-tracking, on by default since Redis 7.0: about 0.5 MB once the
// budget script's dozen commands have run) and the slowlog's copies of its
// slowest calls' arguments (128 kept: about 0.2 MB of the budget mode's
// largest batches). A mode's Redis bytes per identity are used_memory
// grown over the run (memMeter): at 1,000,000 identities the budget layout
// holds state for about 34,000, so these 0.7 MB read as 20 B per identity
// with state. Pure Redis is measured on the same settings. A server given
// with -redis-addr is left as it is (its figures then include whatever
// those records grew by). A Redis before 7.0 has no latency-tracking
// (CONFIG GET finds no such parameter): there is nothing to turn off.
func quietServer(ctx context.Context, addr string) error {
	c := goredis.NewClient(&goredis.Options{Addr: addr})
	defer c.Close()
	if err := c.ConfigSet(ctx, "slowlog-log-slower-than", "-1").Err(); err != nil {
		return fmt.Errorf("redis at %s: turning the slowlog off: %w", addr, err)
	}
	have, err := c.ConfigGet(ctx, "latency-tracking").Result()
	if err != nil {
		return fmt.Errorf("redis at %s: reading latency-tracking: %w", addr, err)
	}
	if len(have) == 0 {
		return nil // a Redis before 7.0: no such parameter, nothing tracked
	}
	if err := c.ConfigSet(ctx, "latency-tracking", "no").Err(); err != nil {
		return fmt.Errorf("redis at %s: turning latency tracking off: %w", addr, err)
	}
	return nil
}
