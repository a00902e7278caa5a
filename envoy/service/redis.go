package service

import (
	"context"
	"time"

	"github.com/edgelimit/edgelimit/backends/redis"
	"github.com/edgelimit/edgelimit/core"
	goredis "github.com/redis/go-redis/v9"
)

// RedisOptions tunes a RedisBackend. The zero value: prefix "el", timeout
// redis.DefaultTimeout, fail closed, no pipelining, the system clock.
type RedisOptions struct {
	Prefix   string        // key prefix (see backends/redis); "" = redis.DefaultPrefix
	Timeout  time.Duration // bound on every Redis call; 0 = redis.DefaultTimeout
	FailOpen bool          // Redis unreachable: admit (true) or deny (false)
	// PipelineWindow and PipelineBatch turn on implicit pipelining of
	// concurrent decisions (redis.WithPipelining) when PipelineBatch > 0.
	PipelineWindow time.Duration
	PipelineBatch  int
	Clock          core.Clock // nil = the system clock
	// Pool bounds the limiters kept besides the configuration's.
	Pool PoolOptions
}

// RedisBackend decides every request atomically at Redis (backends/redis):
// one script call per descriptor, every instance sharing the counts. The
// zero value is not usable; build one with NewRedis.
type RedisBackend struct {
	p      pool
	client goredis.UniversalClient
	// newLimiter builds the limiter of a limit, for the pool and CheckClient.
	newLimiter func(core.Limit) (*redis.Limiter, error)
}

// NewRedis returns a RedisBackend over client, which the caller closes after
// Close. Bad options surface at the first Limiter call as errors matching
// core.ErrInvalid.
func NewRedis(client goredis.UniversalClient, o RedisOptions) *RedisBackend {
	b := &RedisBackend{client: client}
	b.newLimiter = func(l core.Limit) (*redis.Limiter, error) {
		opts := []redis.Option{}
		if o.Prefix != "" {
			opts = append(opts, redis.WithPrefix(o.Prefix))
		}
		if o.Timeout > 0 {
			opts = append(opts, redis.WithTimeout(o.Timeout))
		}
		if o.FailOpen {
			opts = append(opts, redis.WithFailOpen())
		}
		if o.PipelineBatch > 0 {
			opts = append(opts, redis.WithPipelining(o.PipelineWindow, o.PipelineBatch))
		}
		if o.Clock != nil {
			opts = append(opts, redis.WithClock(o.Clock))
		}
		return redis.New(client, l, opts...)
	}
	b.p.build = func(l core.Limit) (core.Limiter, error) { return b.newLimiter(l) }
	b.p.clock, b.p.opts = o.Clock, o.Pool
	return b
}

// Acquire implements Backend.
func (b *RedisBackend) Acquire(l core.Limit) (core.Limiter, func(), error) { return b.p.get(l) }

// Keep implements Backend.
func (b *RedisBackend) Keep(limits []core.Limit) { b.p.keep(limits) }

// Sweep implements Sweeper.
func (b *RedisBackend) Sweep() { b.p.sweep() }

// Pool implements Backend.
func (b *RedisBackend) Pool() PoolStats { return b.p.stats() }

// Close implements Backend; every count is already at Redis.
func (b *RedisBackend) Close(ctx context.Context) error { return b.p.closeAll(ctx) }

// Name implements Backend.
func (b *RedisBackend) Name() string { return "redis" }
