package peers

import (
	"context"
	"time"

	"github.com/go-redis/redis_rate/v10"
	goredis "github.com/redis/go-redis/v9"
)

// RedisRateLimit is the go-redis/redis_rate policy closest to max per
// window: GCRA with rate max per window and a burst of max.
func RedisRateLimit(max int, window time.Duration) redis_rate.Limit {
	return redis_rate.Limit{Rate: max, Burst: max, Period: window}
}

// RedisRate is github.com/go-redis/redis_rate/v10 (GCRA in one Lua script,
// Redis TIME as the clock, one key per identity) on client.
func RedisRate(client *goredis.Client, max int, window time.Duration) Decider {
	l := redis_rate.NewLimiter(client)
	lim := RedisRateLimit(max, window)
	return func(ctx context.Context, key string) (bool, error) {
		r, err := l.Allow(ctx, key, lim)
		return err == nil && r.Allowed > 0, err
	}
}

// RedisRateQueued returns a redis_rate limiter whose script calls are
// queued on p instead of sent: its Allow returns a placeholder result at
// once, and the real EVALSHA, with the arguments redis_rate built, goes out
// when p is executed. It writes many identities' state in few round trips
// (the memory table); the script must already be loaded at the server,
// since a NOSCRIPT reply in a pipeline is not retried.
func RedisRateQueued(p goredis.Pipeliner) *redis_rate.Limiter {
	return redis_rate.NewLimiter(queued{p})
}

// queued is a Pipeliner whose EvalSha answers a placeholder at once.
type queued struct{ goredis.Pipeliner }

func (q queued) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *goredis.Cmd {
	q.Pipeliner.EvalSha(ctx, sha, keys, args...)
	c := goredis.NewCmd(ctx)
	c.SetVal([]any{int64(1), int64(0), "-1", "0"})
	return c
}
