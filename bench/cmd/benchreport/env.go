package main

import (
	"context"
	"fmt"

	"github.com/edgelimit/edgelimit/internal/redisproc"
	goredis "github.com/redis/go-redis/v9"
)

// env is what every table shares: the settings, the private redis-server
// of the throughput tables and a pooled client for it, and the warm keys.
type env struct {
	cfg       settings
	redis     *redisproc.Proc
	client    *goredis.Client
	keys      *keySet
	server    string // redis_version of the private server
	loadStart string // load average when the run began
}

// poolSize is the client's connection pool: above the most concurrent
// callers any table uses, so no row waits for a connection.
const poolSize = 128

func newEnv(cfg settings) (*env, error) {
	p, err := redisproc.Start()
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, redis: p, client: newClient(p.Addr), keys: newKeySet(cfg.warmKeys), loadStart: loadAverage()}
	info, err := e.client.InfoMap(context.Background(), "server").Result()
	if err != nil {
		e.close()
		return nil, fmt.Errorf("redis INFO: %w", err)
	}
	e.server = info["Server"]["redis_version"]
	return e, nil
}

// newClient is the client every Redis row shares, with the setting the
// README recommends for a limiter (ContextTimeoutEnabled).
func newClient(addr string) *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: addr, PoolSize: poolSize, MinIdleConns: 0, ContextTimeoutEnabled: true})
}

func (e *env) close() {
	if e.client != nil {
		e.client.Close()
	}
	if e.redis != nil {
		e.redis.Stop()
	}
}
