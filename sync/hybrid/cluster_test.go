package hybrid

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redisproc"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
)

// nodeTrips is a go-redis hook installed on every node client of a cluster
// client (OnNewNode): it counts, per master address, the round trips that
// carry a script (one per EVALSHA/EVAL sent alone, one per pipeline holding
// any), and every reply that is a CROSSSLOT or MOVED error.
type nodeTrips struct {
	mu       sync.Mutex
	trips    map[string]int64
	crossed  atomic.Int64
	moved    atomic.Int64
	lastErrs []string
}

func newNodeTrips() *nodeTrips { return &nodeTrips{trips: map[string]int64{}} }

func (h *nodeTrips) install(addr string) goredis.Hook { return nodeHook{h, addr} }

func (h *nodeTrips) add(addr string) {
	h.mu.Lock()
	h.trips[addr]++
	h.mu.Unlock()
}

func (h *nodeTrips) snapshot() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int64, len(h.trips))
	for k, v := range h.trips {
		out[k] = v
	}
	return out
}

func (h *nodeTrips) check(err error) {
	if err == nil {
		return
	}
	switch s := err.Error(); {
	case strings.HasPrefix(s, "CROSSSLOT"):
		h.crossed.Add(1)
	case strings.HasPrefix(s, "MOVED"), strings.HasPrefix(s, "ASK"):
		h.moved.Add(1)
	default:
		return
	}
	h.mu.Lock()
	h.lastErrs = append(h.lastErrs, err.Error())
	h.mu.Unlock()
}

type nodeHook struct {
	h    *nodeTrips
	addr string
}

func isScript(c goredis.Cmder) bool { n := c.Name(); return n == "evalsha" || n == "eval" }

func (k nodeHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (k nodeHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if isScript(cmd) {
			k.h.add(k.addr)
		}
		err := next(ctx, cmd)
		k.h.check(cmd.Err())
		return err
	}
}
func (k nodeHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		for _, c := range cmds {
			if isScript(c) {
				k.h.add(k.addr)
				break
			}
		}
		err := next(ctx, cmds)
		for _, c := range cmds {
			k.h.check(c.Err())
		}
		return err
	}
}

// clusterEnv is env's twin on a private three-master Redis Cluster.
type clusterEnv struct {
	t     *testing.T
	cl    *redisproc.Cluster
	rdb   *goredis.ClusterClient
	trips *nodeTrips
	nats  *natstest.Server
	clock *core.ManualClock
}

func newClusterEnv(t *testing.T) *clusterEnv {
	t.Helper()
	_, cl := redistest.Cluster(t)
	e := &clusterEnv{t: t, cl: cl, trips: newNodeTrips(), nats: natstest.Start(t),
		clock: core.NewManualClock(t0)}
	e.rdb = goredis.NewClusterClient(cl.Options())
	e.rdb.OnNewNode(func(c *goredis.Client) { c.AddHook(e.trips.install(c.Options().Addr)) })
	t.Cleanup(func() { e.rdb.Close() })
	return e
}

func (e *clusterEnv) node(pop string, mod func(*Config)) *Node {
	e.t.Helper()
	cfg := Config{PoP: pop, Limit: core.PerWindow(100, 10*time.Second), Redis: e.rdb,
		Clock: e.clock, Resync: -1, NATS: e.nats.Connect(e.t)}
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

// redisTotal sums every PoP field of key's hash for window idx, read
// through the cluster client (routed to the owning master).
func (e *clusterEnv) redisTotal(key string, idx int64) int64 {
	e.t.Helper()
	m, err := e.rdb.HGetAll(context.Background(), reconcile.Key("el", key, idx)).Result()
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

func (e *clusterEnv) noClusterErrors() {
	e.t.Helper()
	if c, m := e.trips.crossed.Load(), e.trips.moved.Load(); c != 0 || m != 0 {
		e.t.Fatalf("%d CROSSSLOT and %d MOVED/ASK replies: %v", c, m, e.trips.lastErrs)
	}
}

// TestClusterNoDoubleCount: three PoPs on a three-master Redis Cluster
// (and one NATS), traffic over 60 identities with hot ones driven to their
// limit (so local, Redis-decided and cached-deny decisions all happen),
// gossip and reconcile interleaved at random. After everything is flushed
// every view and the cluster hold exactly the admitted count of every
// identity; no decision or Sync failed, and no reply was CROSSSLOT or MOVED.
func TestClusterNoDoubleCount(t *testing.T) {
	e := newClusterEnv(t)
	mod := func(c *Config) { c.Margin = 0.1 }
	nodes := []*Node{e.node("a", mod), e.node("b", mod), e.node("c", mod)}
	now := e.clock.Now()
	r := rand.New(rand.NewPCG(11, 13))
	admitted := map[string]int64{}
	for step := 0; step < 3000; step++ {
		n := nodes[r.IntN(3)]
		key := fmt.Sprint("id", r.IntN(60))
		if r.IntN(2) == 0 {
			key = fmt.Sprint("hot", r.IntN(3))
		}
		if mustAllow(t, n, key, now).Allowed {
			admitted[key]++
		}
		switch r.IntN(40) {
		case 0:
			mustSync(t, n, now)
		case 1:
			if err := n.Gossip(now); err != nil {
				t.Fatal(err)
			}
		}
	}
	settle(t, nil, nodes, now)
	var redis uint64
	for _, n := range nodes {
		s := n.Stats()
		if s.RedisErrors != 0 || s.FallbackLocal != 0 {
			t.Fatalf("%s: %+v", n.ID(), s)
		}
		redis += s.RedisDecisions
	}
	if redis == 0 || admitted["hot0"] < 100 {
		t.Fatalf("hot identity admitted %d (want it driven to its limit, 100) with %d Redis decisions",
			admitted["hot0"], redis)
	}
	idx, _ := nodes[0].position(core.Millis(now))
	for key, want := range admitted {
		if got := e.redisTotal(key, idx); got != want {
			t.Fatalf("cluster holds %s = %d, want %d", key, got, want)
		}
		for _, n := range nodes {
			if got, _ := n.Counts(key, now); got != want {
				t.Fatalf("%s view of %s = %d, want %d", n.ID(), key, got, want)
			}
		}
	}
	e.noClusterErrors()
	t.Logf("%d identities exact on the cluster; %d Redis-decided; script round trips per master %v; hot identities admitted %d, %d, %d of 100 (local-first over-admission)",
		len(admitted), redis, e.trips.snapshot(), admitted["hot0"], admitted["hot1"], admitted["hot2"])
}

// TestClusterSyncGroupsByNode: a Sync of identities spread over the three
// masters costs one round trip per master when each master's share fits in
// BatchSize, and with a small BatchSize one round trip per batch of one
// master's identities (never a batch spanning masters); the Node's
// RedisRoundTrips counts exactly the round trips the masters saw. (A
// master that has not loaded the script yet costs one more round trip, the
// EVAL after NOSCRIPT, once; a first Sync loads it everywhere.)
func TestClusterSyncGroupsByNode(t *testing.T) {
	e := newClusterEnv(t)
	warm := e.node("warm", func(c *Config) { c.NATS = nil })
	for i := 0; i < 60; i++ {
		mustAllow(t, warm, fmt.Sprint("warm:", i), e.clock.Now())
	}
	mustSync(t, warm, e.clock.Now())
	for _, bs := range []int{0, 16} {
		n := e.node(fmt.Sprint("bs", bs), func(c *Config) { c.BatchSize = bs; c.NATS = nil })
		now := e.clock.Now()
		const ids = 150
		for i := 0; i < ids; i++ {
			mustAllow(t, n, fmt.Sprintf("bs%d:user:%d", bs, i), now)
		}
		shares := map[string]int{}
		for i := 0; i < ids; i++ {
			shares[n.store.Shard(context.Background(), fmt.Sprintf("bs%d:user:%d", bs, i))]++
		}
		if len(shares) != e.cl.Masters() {
			t.Fatalf("150 identities on %d masters: %v", len(shares), shares)
		}
		before, beforeStat := e.trips.snapshot(), n.Stats().RedisRoundTrips
		mustSync(t, n, now)
		after, stat := e.trips.snapshot(), n.Stats().RedisRoundTrips-beforeStat
		var total int64
		for _, addr := range e.cl.Addrs() {
			got := after[addr] - before[addr]
			want := int64(1)
			if bs > 0 {
				want = int64((shares[addr] + bs - 1) / bs)
			}
			if got != want {
				t.Errorf("BatchSize %d: master %s (%d identities) saw %d round trips, want %d",
					bs, addr, shares[addr], got, want)
			}
			total += got
		}
		if bs == 0 && total > int64(e.cl.Masters()) {
			t.Errorf("Sync cost %d round trips, more than %d masters", total, e.cl.Masters())
		}
		if int64(stat) != total {
			t.Errorf("BatchSize %d: Stats.RedisRoundTrips grew by %d, masters saw %d", bs, stat, total)
		}
		t.Logf("BatchSize %d: %d identities %v -> %d round trips", bs, ids, shares, total)
		idx, _ := n.position(core.Millis(now))
		for i := 0; i < ids; i++ {
			if got := e.redisTotal(fmt.Sprintf("bs%d:user:%d", bs, i), idx); got != 1 {
				t.Fatalf("identity %d: cluster holds %d, want 1", i, got)
			}
		}
	}
	e.noClusterErrors()
}
