package main

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/edgelimit/edgelimit/sim/engine"
	goredis "github.com/redis/go-redis/v9"
)

// loadMeter reads the script and CPU counters of a Redis before and after
// a mode: of the single node, or summed over every master of a Redis
// Cluster (each master's INFO covers its own work only; the run's modes
// go one after the other, so what the masters did meanwhile is the
// mode's, as long as nothing else uses the cluster). Replicas are not
// counted: they replay writes, not scripts. When INFO fails it reports
// nothing.
type loadMeter struct {
	read   func(context.Context) (engine.RedisLoad, bool)
	close  func() error
	before engine.RedisLoad
	ok     bool
}

// startLoad reads the counters of the Redis at addr: one node, or, with
// cluster, the cluster that addr (one node or a comma-separated list)
// belongs to. An empty addr gives a meter that reports nothing.
func startLoad(ctx context.Context, addr string, cluster bool) *loadMeter {
	m := &loadMeter{}
	switch {
	case addr == "":
		return m
	case cluster:
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(addr, ",")})
		m.read, m.close = func(ctx context.Context) (engine.RedisLoad, bool) { return readClusterLoad(ctx, c) }, c.Close
	default:
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		m.read, m.close = func(ctx context.Context) (engine.RedisLoad, bool) { return readLoad(ctx, c) }, c.Close
	}
	m.before, m.ok = m.read(ctx)
	return m
}

// stop returns what Redis did since startLoad; nil when unknown.
func (m *loadMeter) stop(ctx context.Context) *engine.RedisLoad {
	if m.read == nil {
		return nil
	}
	defer m.close()
	after, ok := m.read(ctx)
	if !m.ok || !ok {
		return nil
	}
	return &engine.RedisLoad{ScriptCalls: after.ScriptCalls - m.before.ScriptCalls,
		ScriptSeconds: after.ScriptSeconds - m.before.ScriptSeconds,
		CPUSeconds:    after.CPUSeconds - m.before.CPUSeconds}
}

// readLoad reads INFO commandstats and cpu of one node; ok is false when
// Redis refused.
func readLoad(ctx context.Context, rdb goredis.UniversalClient) (engine.RedisLoad, bool) {
	info, err := rdb.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return engine.RedisLoad{}, false
	}
	return parseLoad(info), true
}

// readClusterLoad sums readLoad over every master of c; ok is false when
// one of them refused.
func readClusterLoad(ctx context.Context, c *goredis.ClusterClient) (engine.RedisLoad, bool) {
	var mu sync.Mutex
	var sum engine.RedisLoad
	err := c.ForEachMaster(ctx, func(ctx context.Context, n *goredis.Client) error {
		l, ok := readLoad(ctx, n)
		if !ok {
			return errors.New("INFO refused")
		}
		mu.Lock()
		defer mu.Unlock()
		sum.ScriptCalls += l.ScriptCalls
		sum.ScriptSeconds += l.ScriptSeconds
		sum.CPUSeconds += l.CPUSeconds
		return nil
	})
	return sum, err == nil
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
