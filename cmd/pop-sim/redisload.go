package main

import (
	"context"
	"strconv"
	"strings"

	"github.com/edgelimit/edgelimit/sim/engine"
	goredis "github.com/redis/go-redis/v9"
)

// loadMeter reads a single Redis node's script and CPU counters before
// and after a mode. On a cluster (or when INFO fails) it reports nothing.
type loadMeter struct {
	rdb    *goredis.Client
	before engine.RedisLoad
	ok     bool
}

// startLoad reads the counters of the Redis at addr; a list of cluster
// nodes gives a meter that reports nothing.
func startLoad(ctx context.Context, addr string) *loadMeter {
	if addr == "" || strings.Contains(addr, ",") {
		return &loadMeter{}
	}
	m := &loadMeter{rdb: goredis.NewClient(&goredis.Options{Addr: addr})}
	m.before, m.ok = readLoad(ctx, m.rdb)
	return m
}

// stop returns what Redis did since startLoad; nil when unknown.
func (m *loadMeter) stop(ctx context.Context) *engine.RedisLoad {
	if m.rdb == nil {
		return nil
	}
	defer m.rdb.Close()
	after, ok := readLoad(ctx, m.rdb)
	if !m.ok || !ok {
		return nil
	}
	return &engine.RedisLoad{ScriptCalls: after.ScriptCalls - m.before.ScriptCalls,
		ScriptSeconds: after.ScriptSeconds - m.before.ScriptSeconds,
		CPUSeconds:    after.CPUSeconds - m.before.CPUSeconds}
}

// readLoad reads INFO commandstats and cpu; ok is false when Redis
// refused or the server is a cluster node (its INFO covers other work).
func readLoad(ctx context.Context, rdb *goredis.Client) (engine.RedisLoad, bool) {
	info, err := rdb.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return engine.RedisLoad{}, false
	}
	return parseLoad(info), true
}

// parseLoad sums the script commands' calls and usec and the CPU lines of
// an INFO text.
func parseLoad(info string) engine.RedisLoad {
	var l engine.RedisLoad
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch name {
		case "cmdstat_evalsha", "cmdstat_eval":
			l.ScriptCalls += statField(rest, "calls")
			l.ScriptSeconds += float64(statField(rest, "usec")) / 1e6
		case "used_cpu_user", "used_cpu_sys":
			v, _ := strconv.ParseFloat(rest, 64)
			l.CPUSeconds += v
		}
	}
	return l
}

// statField reads key=N from a commandstats value "calls=3,usec=12,...".
func statField(stats, key string) int64 {
	for _, kv := range strings.Split(stats, ",") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
