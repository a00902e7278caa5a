package peers

import (
	"context"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/store/memory"
	redisstore "github.com/ulule/limiter/v3/drivers/store/redis"
)

// UluleMemory is github.com/ulule/limiter/v3 with its memory store: a fixed
// window of max per window for each key.
func UluleMemory(max int64, window time.Duration) Decider {
	return ulule(memory.NewStore(), max, window)
}

// UluleRedis is github.com/ulule/limiter/v3 with its Redis store (INCRBY
// and PEXPIRE in one Lua script, a fixed window) on client.
func UluleRedis(client *goredis.Client, max int64, window time.Duration) (Decider, error) {
	st, err := redisstore.NewStoreWithOptions(client, limiter.StoreOptions{Prefix: "ulule"})
	if err != nil {
		return nil, err
	}
	return ulule(st, max, window), nil
}

func ulule(st limiter.Store, max int64, window time.Duration) Decider {
	l := limiter.New(st, limiter.Rate{Period: window, Limit: max})
	return func(ctx context.Context, key string) (bool, error) {
		c, err := l.Get(ctx, key)
		return err == nil && !c.Reached, err
	}
}
