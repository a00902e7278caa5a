package hybrid

import (
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	"github.com/nats-io/nats.go"
	goredis "github.com/redis/go-redis/v9"
)

// counter is a go-redis hook counting every command sent.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *counter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}
func (c *counter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

type env struct {
	t     *testing.T
	proc  *redisproc.Proc
	rdb   *goredis.Client
	cmds  *counter
	nats  *natstest.Server
	clock *core.ManualClock
}

// t0 is the middle of a window for every window length used here.
var t0 = time.UnixMilli(1_800_000_000_000 + 500)

func newEnv(t *testing.T, withNATS bool) *env {
	t.Helper()
	e := &env{t: t, proc: redistest.Start(t), cmds: &counter{}, clock: core.NewManualClock(t0)}
	e.rdb = goredis.NewClient(&goredis.Options{Addr: e.proc.Addr, MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Second, PoolSize: 8,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return (&net.Dialer{Timeout: 200 * time.Millisecond}).DialContext(ctx, network, addr)
		}})
	e.rdb.AddHook(e.cmds)
	t.Cleanup(func() { e.rdb.Close() })
	if withNATS {
		e.nats = natstest.Start(t)
	}
	return e
}

func (e *env) node(pop string, mod func(*Config)) *Node {
	e.t.Helper()
	cfg := Config{PoP: pop, Limit: core.PerWindow(100, 10*time.Second), Redis: e.rdb,
		Clock: e.clock, Resync: -1}
	if e.nats != nil {
		cfg.NATS = e.nats.Connect(e.t)
	}
	if mod != nil {
		mod(&cfg)
	}
	n, err := New(cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() { n.Close(context.Background()) })
	return n
}

// redisTotal sums every PoP field of key's hash for window idx.
func (e *env) redisTotal(ns, key string, idx int64) int64 {
	e.t.Helper()
	m, err := e.rdb.HGetAll(context.Background(), reconcile.Key(ns, key, idx)).Result()
	if err != nil {
		e.t.Fatalf("HGETALL: %v", err)
	}
	var s int64
	for _, v := range m {
		c, _ := strconv.ParseInt(v, 10, 64)
		s += c
	}
	return s
}

func (e *env) idx(n *Node) int64 {
	i, _ := n.position(core.Millis(e.clock.Now()))
	return i
}

func mustAllow(t *testing.T, n *Node, key string, now time.Time) core.Decision {
	t.Helper()
	d, err := n.AllowN(context.Background(), key, now, 1)
	if err != nil {
		t.Fatalf("AllowN(%q): %v", key, err)
	}
	return d
}

func mustSync(t *testing.T, n *Node, now time.Time) {
	t.Helper()
	if err := n.Sync(context.Background(), now); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

// waitFor polls cond every 5ms until it holds. Its one-minute bound is
// for a hang only: what it waits for (a background loop's effect, a
// connection's state) comes when the machine gets to it, and a loaded
// machine may take seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// flushNATS makes sure everything published on nc reached the server.
func flushNATS(t *testing.T, nc *nats.Conn) {
	t.Helper()
	if err := nc.FlushTimeout(5 * time.Second); err != nil {
		t.Fatalf("nats flush: %v", err)
	}
}
