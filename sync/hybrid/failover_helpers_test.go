package hybrid

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/internal/natstest"
	"github.com/edgelimit/edgelimit/internal/redistest"
	"github.com/edgelimit/edgelimit/sync/reconcile"
	goredis "github.com/redis/go-redis/v9"
)

// newFailoverEnv is newClusterEnv on a cluster of three masters with one
// replica each (redistest.ReplicatedCluster), its client fenced by f. The
// client keeps go-redis' defaults: it reloads its slot map only on
// MOVED/ASK replies or every ClusterStateReloadInterval (60 s).
func newFailoverEnv(t *testing.T, f *fence) *clusterEnv {
	t.Helper()
	_, cl := redistest.ReplicatedCluster(t)
	e := &clusterEnv{t: t, cl: cl, trips: newNodeTrips(), nats: natstest.Start(t),
		clock: core.NewManualClock(t0)}
	e.rdb = goredis.NewClusterClient(cl.Options())
	e.rdb.OnNewNode(f.install)
	t.Cleanup(func() { e.rdb.Close() })
	return e
}

// wallClock is t0 plus the wall time since start: it moves (so RedisRetry
// expires) and, t0 being 500 ms into a one-minute window, stays in that
// window for the length of a test. It is the wall clock because the
// failover it runs beside is Redis Cluster's, on the wall clock; a run
// longer than 59.5 s would cross into the next window.
type wallClock struct{ start time.Time }

func (c wallClock) Now() time.Time { return t0.Add(time.Since(c.start)) }

// fields reads key's hash of window idx through rd (the tests pass a client
// made after the failover, whose slot map shows the promoted replica),
// reloading rd's slot map and retrying on errors for up to 10 s.
func (e *clusterEnv) fields(rd *goredis.ClusterClient, key string, idx int64) map[string]int64 {
	e.t.Helper()
	var m map[string]string
	waitFor(e.t, "HGETALL "+key, func() bool {
		var err error
		m, err = rd.HGetAll(context.Background(), reconcile.Key("el", key, idx)).Result()
		if err != nil {
			rd.ReloadState(context.Background())
		}
		return err == nil
	})
	out := make(map[string]int64, len(m))
	for f, v := range m {
		out[f], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}

// ackedOwn is what n believes Redis holds of its own units of key in
// window idx (0 for a key n never saw).
func ackedOwn(n *Node, key string, idx int64) int64 {
	e, ok := n.lookup(key)
	if !ok {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.roll(idx)
	return e.ackedAt(idx)
}

// phase counts what happened in one stretch of a failover run.
type phase struct {
	rounds, decisions, local, redis, cachedDeny int
	failOpen, failClosed, fallbackElsewhere     int // Redis unreachable: admitted locally, denied; on a live master's identity
	slowest                                     time.Duration
	syncs, syncErrors                           int64
}

func (p phase) String() string {
	return fmt.Sprintf("%d rounds, %d decisions (%d local, %d at Redis, %d cached denies, %d fail-open, %d fail-closed, %d of those on live masters' identities; slowest %s), %d Syncs completed (%d failed)",
		p.rounds, p.decisions, p.local, p.redis, p.cachedDeny, p.failOpen, p.failClosed,
		p.fallbackElsewhere, p.slowest.Round(time.Millisecond), p.syncs, p.syncErrors)
}

// failRun drives three PoPs over a replicated cluster: decisions in rounds
// from the test's goroutine, Syncs from one background syncer per PoP.
type failRun struct {
	t        *testing.T
	e        *clusterEnv
	nodes    []*Node
	rng      *rand.Rand
	clock    wallClock
	admitted map[string]int64 // every identity driven, with its admitted units
	onVictim map[string]bool  // identities served by the master to kill
	late     bool             // drive the late hot identities too
	cur      *phase
	sy       *syncers
	fence    *fence
}

// Traffic of one round, per PoP: coldPerRound of coldIDs cold identities
// at random, each of hotIDs hot identities once (over the limit after
// about 34 rounds) and, once late is set, each of hotIDs late ones.
const (
	coldIDs      = 240
	coldPerRound = 10
	hotIDs       = 6
)

// newFailRun builds PoPs a and b (fail open) and c (FailClosed), 100 per
// minute with margin 0.1, gossiping every 50 ms over NATS, and starts
// their syncers.
func newFailRun(t *testing.T, e *clusterEnv, f *fence) *failRun {
	r := &failRun{t: t, e: e, fence: f, rng: rand.New(rand.NewPCG(7, 9)), clock: wallClock{time.Now()},
		admitted: map[string]int64{}, onVictim: map[string]bool{}, cur: &phase{}}
	for _, pop := range []string{"a", "b", "c"} {
		n := e.node(pop, func(c *Config) {
			c.Limit, c.Margin = core.PerWindow(100, time.Minute), 0.1
			c.Clock, c.FailClosed = r.clock, pop == "c"
		})
		n.Start(LoopOff, 50*time.Millisecond)
		r.nodes = append(r.nodes, n)
	}
	for i := 0; i < coldIDs; i++ {
		r.admitted[fmt.Sprint("user:", i)] = 0
	}
	for i := 0; i < hotIDs; i++ {
		r.admitted[fmt.Sprint("hot:", i)], r.admitted[fmt.Sprint("late:", i)] = 0, 0
	}
	r.sy = startSyncers(t, r.nodes, r.clock)
	return r
}

// victim returns the index of the node serving key, and records which
// identities that master serves.
func (r *failRun) victim(key string) int {
	r.t.Helper()
	v, err := r.e.cl.MasterOf(reconcile.Key("el", key, 0))
	if err != nil {
		r.t.Fatal(err)
	}
	for id := range r.admitted {
		m, err := r.e.rdb.MasterForKey(context.Background(), reconcile.Key("el", id, 0))
		if err != nil {
			r.t.Fatal(err)
		}
		r.onVictim[id] = m.Options().Addr == r.e.cl.Node(v).Addr
	}
	return v
}

// begin ends the current phase, adding the Syncs run since it began, and
// returns it; a new one starts.
func (r *failRun) begin() *phase {
	ended := r.cur
	ended.syncs += r.sy.syncs.Load()
	ended.syncErrors += r.sy.errs.Load()
	r.cur = &phase{syncs: -r.sy.syncs.Load(), syncErrors: -r.sy.errs.Load()}
	return ended
}

// round makes every PoP decide its share of traffic.
func (r *failRun) round() {
	for _, n := range r.nodes {
		for k := 0; k < coldPerRound; k++ {
			r.decide(n, fmt.Sprint("user:", r.rng.IntN(coldIDs)))
		}
		for h := 0; h < hotIDs; h++ {
			r.decide(n, fmt.Sprint("hot:", h))
			if r.late {
				r.decide(n, fmt.Sprint("late:", h))
			}
		}
	}
	r.cur.rounds++
}

// decide makes one decision and checks the fail mode: an error is always a
// *core.UnavailableError, returned with a local admission by a fail-open
// PoP or a core.SourceFailClosed denial by a FailClosed one.
func (r *failRun) decide(n *Node, key string) {
	r.t.Helper()
	start := time.Now() // for the log's slowest decision only, never asserted
	d, err := n.AllowN(context.Background(), key, r.clock.Now(), 1)
	r.cur.slowest = max(r.cur.slowest, time.Since(start))
	r.cur.decisions++
	if d.Allowed {
		r.admitted[key]++
	}
	var ue *core.UnavailableError
	switch {
	case err == nil:
		r.count(d.Source)
	case !errors.As(err, &ue) || !errors.Is(err, core.ErrUnavailable):
		r.t.Fatalf("%s AllowN(%s): untyped error %v", n.ID(), key, err)
	case n.cfg.FailClosed && (d.Allowed || d.Source != core.SourceFailClosed):
		r.t.Fatalf("%s (FailClosed) AllowN(%s) with Redis unreachable: %+v, want a fail-closed denial", n.ID(), key, d)
	case !n.cfg.FailClosed && (!d.Allowed || d.Source != core.SourceLocal):
		r.t.Fatalf("%s (fail open) AllowN(%s) with Redis unreachable: %+v, want a local admission", n.ID(), key, d)
	default:
		r.countFallback(n.cfg.FailClosed, key)
	}
}

func (r *failRun) count(s core.Source) {
	switch s {
	case core.SourceLocal:
		r.cur.local++
	case core.SourceRedis:
		r.cur.redis++
	case core.SourceCachedDeny:
		r.cur.cachedDeny++
	}
}

func (r *failRun) countFallback(closed bool, key string) {
	if closed {
		r.cur.failClosed++
	} else {
		r.cur.failOpen++
	}
	if !r.onVictim[key] {
		r.cur.fallbackElsewhere++
	}
}

// held compares Redis with what was admitted and acknowledged.
type held struct {
	admitted, redis     int64 // units admitted; units Redis holds
	missing, over       int64 // per identity, admitted above Redis; Redis above admitted
	lostAcked           int64 // units a PoP saw Redis acknowledge that Redis no longer holds
	victimAdm, victimRd int64 // admitted and held of the killed master's identities
}

func (h held) String() string {
	return fmt.Sprintf("admitted %d, Redis holds %d (missing %d, above %d; acknowledged then lost %d); killed master's identities: admitted %d, held %d",
		h.admitted, h.redis, h.missing, h.over, h.lostAcked, h.victimAdm, h.victimRd)
}

// measure reads every identity's hash on a fresh client; the syncers'
// Syncs are held off meanwhile (one in flight is waited for).
func (r *failRun) measure() held {
	r.sy.gate.Lock()
	defer r.sy.gate.Unlock()
	rd := goredis.NewClusterClient(r.e.cl.Options())
	defer rd.Close()
	idx, _ := r.nodes[0].position(core.Millis(r.clock.Now()))
	var h held
	for key, adm := range r.admitted {
		f := r.e.fields(rd, key, idx)
		var sum int64
		for _, v := range f {
			sum += v
		}
		h.admitted, h.redis = h.admitted+adm, h.redis+sum
		h.missing, h.over = h.missing+max(adm-sum, 0), h.over+max(sum-adm, 0)
		for _, n := range r.nodes {
			h.lostAcked += max(ackedOwn(n, key, idx)-f[n.ID()], 0)
		}
		if r.onVictim[key] {
			h.victimAdm, h.victimRd = h.victimAdm+adm, h.victimRd+sum
		}
	}
	return h
}

// cutTail lowers n's field of up to five of the killed master's identities
// by three units on the promoted replica, as if the old master had
// acknowledged writes it never replicated, and returns the units cut.
func (r *failRun) cutTail(n *Node) int64 {
	r.sy.gate.Lock()
	defer r.sy.gate.Unlock()
	rd := goredis.NewClusterClient(r.e.cl.Options())
	defer rd.Close()
	idx, _ := n.position(core.Millis(r.clock.Now()))
	var cut int64
	for key, victim := range r.onVictim {
		if !victim || cut >= 15 {
			continue
		}
		if v := r.e.fields(rd, key, idx)[n.ID()]; v >= 3 {
			k := reconcile.Key("el", key, idx)
			if err := rd.HSet(context.Background(), k, n.ID(), v-3).Err(); err != nil {
				r.t.Fatalf("HSET %s: %v", k, err)
			}
			cut += 3
		}
	}
	return cut
}
