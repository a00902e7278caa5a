package engine

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"
)

// tripCounter is a go-redis hook that counts network round trips: one per
// command sent alone, one per pipeline. On a Redis Cluster it is installed
// on every node's client, so a pipeline counts one round trip per node it
// touches (go-redis splits it by node). Three kinds are left out so that the
// count depends on the limiter and the traffic alone: the handshake go-redis
// sends on each new connection (HELLO, CLIENT SETINFO, ...), whose number
// depends on goroutine timing; the cluster client's slot-map loads (CLUSTER
// SLOTS/SHARDS), whose number depends on wall time; and an EVALSHA (or a
// pipeline of them) that found no script loaded, whose number depends on
// what ran on the server before (the EVAL that follows it is counted).
type tripCounter struct{ n atomic.Int64 }

// handshake names the commands go-redis sends when it opens a connection,
// and the cluster client's topology queries.
var handshake = map[string]bool{"hello": true, "client": true, "auth": true, "select": true,
	"readonly": true, "ping": true, "cluster": true}

func (t *tripCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (t *tripCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		err := next(ctx, cmd)
		if !handshake[cmd.Name()] && !noScript(err) {
			t.n.Add(1)
		}
		return err
	}
}

func (t *tripCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		err := next(ctx, cmds)
		if counted(cmds) {
			t.n.Add(1)
		}
		return err
	}
}

// countedClient is a client of e's Redis whose round trips are counted: a
// cluster client when RedisAddr lists several nodes or RedisCluster is set,
// with the counter on each node's own client (a hook added to the cluster
// client itself would see a pipeline once, however many nodes it touches).
func (e *Env) countedClient(poolSize int) (goredis.UniversalClient, *tripCounter) {
	t := &tripCounter{}
	addrs := strings.Split(e.RedisAddr, ",")
	if len(addrs) == 1 && !e.RedisCluster {
		c := goredis.NewClient(&goredis.Options{Addr: e.RedisAddr, PoolSize: poolSize})
		c.AddHook(t)
		return c, t
	}
	return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs, PoolSize: poolSize,
		NewClient: func(o *goredis.Options) *goredis.Client {
			c := goredis.NewClient(o)
			c.AddHook(t)
			return c
		}}), t
}

// counted reports whether a pipeline is a round trip of the limiter: it
// holds a command other than the handshake and not all of it found no
// script.
func counted(cmds []goredis.Cmder) bool {
	var real, lost int
	for _, c := range cmds {
		switch {
		case handshake[c.Name()]:
		case noScript(c.Err()):
			lost++
			real++
		default:
			real++
		}
	}
	return real > 0 && lost < real
}

// noScript reports whether err is Redis' NOSCRIPT refusal.
func noScript(err error) bool {
	return err != nil && (errors.Is(err, goredis.ErrNoScript) || strings.HasPrefix(err.Error(), "NOSCRIPT"))
}
