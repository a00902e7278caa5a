package hybrid

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
	"github.com/edgelimit/edgelimit/sync/reconcile"
)

// roundPause spaces the rounds of decisions of a failover run.
// roundPause paces the rounds of traffic; it bounds nothing. The failover
// these tests drive runs on Redis Cluster's own wall clock (its nodes mark
// a silent master failing after cluster-node-timeout and elect a replica),
// which no injected clock reaches, so traffic goes on in rounds until the
// cluster reports the promotion: every wait below is for that event, with
// bounds only a hang reaches.
const roundPause = 10 * time.Millisecond

// TestFailoverLossBound: three PoPs (a and b fail open, c FailClosed) on a
// Redis Cluster of three masters with one replica each, traffic over 252
// identities spread over every master (six hot ones over the limit), each
// PoP Syncing every 20 ms in the background. The master serving some of
// them is killed (SIGKILL); the PoPs keep deciding and Syncing until its
// replica is promoted and (still fenced off it) they met a local, a
// fail-open and a fail-closed decision. Every decision goes on: local ones without error,
// Redis-decided ones with a *core.UnavailableError and the configured fail
// mode (a local admission, or a fail-closed denial). A go-redis hook keeps
// the PoPs from the promoted replica until the test has measured what it
// holds and cut a simulated un-replicated tail from it (units the old
// master acknowledged that its replica never got: asynchronous
// replication). Then the PoPs reach it (waited for, a minute at most),
// and once each has Synced Redis holds every admitted hit; the killed node, restarted,
// rejoins as a replica, and Redis still holds every admitted hit. Nothing
// is double counted beyond one unit per Redis-decided call that failed
// after it may have been applied. The figures are logged.
func TestFailoverLossBound(t *testing.T) {
	f := &fence{}
	e := newFailoverEnv(t, f)
	r := newFailRun(t, e, f)
	victim := r.victim("late:0")
	for i := 0; i < 40; i++ {
		r.round()
		time.Sleep(roundPause)
	}
	before := r.preload(85)
	during, took := r.failover(victim)
	rightAfter := r.measure()
	cut := r.cutTail(r.nodes[0])
	if cut == 0 {
		t.Fatal("no un-replicated tail to cut: PoP a wrote nothing to the killed master")
	}
	lifted := time.Now()
	f.lift()
	after, recovered := r.recover(lifted)
	settled := r.settle()
	restart := r.restart(victim)
	final := r.settle()
	r.begin()
	r.sy.check(t)
	t.Logf("before the kill: %v", *before)
	t.Logf("failover (kill to replica promoted) %s: %v", took.Round(time.Millisecond), *during)
	t.Logf("right after failover: %v", rightAfter)
	t.Logf("simulated un-replicated tail cut from the new master: %d units", cut)
	t.Logf("every PoP Synced %s after the promoted replica became reachable: %v", recovered.Round(time.Millisecond), *after)
	t.Logf("then, traffic paused, after one more Sync per PoP: %v", settled)
	t.Logf("killed master restarting: %v", *restart)
	t.Logf("after it rejoined as a replica, after one more Sync per PoP: %v", final)
	r.check(during, settled, final)
}

// preload has PoP a admit units of every late hot identity (local
// decisions, just under the margin), so that in the failover the late
// identities are decided at Redis; it returns the phase that ends.
func (r *failRun) preload(units int) *phase {
	a := r.nodes[0]
	for h := 0; h < hotIDs; h++ {
		for i := 0; i < units; i++ {
			r.decide(a, fmt.Sprint("late:", h))
		}
	}
	r.late = true
	return r.begin()
}

// failover fences the PoPs off node victim's replica, kills victim a few
// ms into a round and runs rounds until the replica is promoted, returning
// that stretch's counts and how long the promotion took after the kill.
func (r *failRun) failover(victim int) (*phase, time.Duration) {
	r.t.Helper()
	reps, err := r.e.cl.Replicas(victim)
	if err != nil || len(reps) != 1 {
		r.t.Fatalf("replicas of node %d: %v (err %v), want one", victim, reps, err)
	}
	r.fence.set(r.e.cl.Node(reps[0]).Addr)
	killed, promoted := make(chan time.Time, 1), make(chan error, 1)
	go func() {
		time.Sleep(3 * time.Millisecond) // pacing: let the rounds start first; any delay works
		r.e.cl.Kill(victim)
		killed <- time.Now()
		promoted <- r.e.cl.WaitHealthy(time.Minute)
	}()
	for {
		r.round()
		select {
		case err := <-promoted:
			if err != nil {
				r.t.Fatalf("no replica promoted: %v", err)
			}
			took := time.Since(<-killed)
			if m, err := r.e.cl.MasterOf(reconcile.Key("el", "late:0", 0)); err != nil || m != reps[0] {
				r.t.Fatalf("late:0 served by node %d (err %v), want the promoted replica %d", m, err, reps[0])
			}
			// The PoPs stay fenced off the promoted replica, so the dead
			// master's identities still fail: on a loaded machine the
			// promotion can come before the rounds met every kind of
			// decision check wants, so rounds go on (by count) until they did.
			for extra := 0; r.cur.local == 0 || r.cur.failOpen == 0 || r.cur.failClosed == 0; extra++ {
				if extra == 3000 {
					r.t.Fatalf("3000 rounds after the promotion, still fenced, met no fallback of each kind: %v", *r.cur)
				}
				r.round()
				time.Sleep(roundPause)
			}
			return r.begin(), took
		default:
			time.Sleep(roundPause)
		}
	}
}

// recover runs rounds until every PoP finished a successful Sync begun
// after since (a minute, for a hang only), returning that stretch's counts and how long
// after since it took.
func (r *failRun) recover(since time.Time) (*phase, time.Duration) {
	r.t.Helper()
	for !r.sy.syncedSince(since) {
		if time.Since(since) > time.Minute {
			r.t.Fatalf("Syncs still failing a minute after the promoted replica became reachable: the PoPs never reached it (%v)", *r.begin())
		}
		r.round()
		time.Sleep(roundPause)
	}
	took := time.Since(since)
	return r.begin(), took
}

// settle pauses traffic until every PoP finished a successful Sync, then
// measures.
func (r *failRun) settle() held {
	since := time.Now()
	waitFor(r.t, "a successful Sync on every PoP", func() bool { return r.sy.syncedSince(since) })
	return r.measure()
}

// restart brings the killed node back while rounds go on and checks it
// rejoined as a replica, returning that stretch's counts.
func (r *failRun) restart(victim int) *phase {
	r.t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.e.cl.Restart(victim) }()
	for {
		r.round()
		select {
		case err := <-done:
			if err != nil {
				r.t.Fatalf("restart of the killed master: %v", err)
			}
			if rep, err := r.e.cl.Replica(victim); err != nil || !rep {
				r.t.Fatalf("killed master restarted: replica %v (err %v), want a replica", rep, err)
			}
			return r.begin()
		default:
			time.Sleep(roundPause)
		}
	}
}

// check asserts what the design guarantees.
func (r *failRun) check(during *phase, settled, final held) {
	r.t.Helper()
	if during.local == 0 || during.failOpen == 0 || during.failClosed == 0 {
		r.t.Fatalf("failover exercised too little (want local, fail-open and fail-closed decisions): %v", *during)
	}
	if during.fallbackElsewhere != 0 {
		r.t.Fatalf("%d Redis-decided requests for live masters' identities fell back: a dead master must mark only itself down", during.fallbackElsewhere)
	}
	if settled.missing != 0 || final.missing != 0 {
		r.t.Fatalf("hits lost: %d after the PoPs reached the promoted replica, %d at the end", settled.missing, final.missing)
	}
	var failedDecides uint64
	for _, n := range r.nodes {
		s := n.Stats()
		if s.PendingDropped != 0 || s.EvictedWithCounts != 0 {
			r.t.Fatalf("%s dropped pending hits: %+v", n.ID(), s)
		}
		failedDecides += s.FailClosed + s.FallbackLocal
	}
	if uint64(final.over) > failedDecides {
		r.t.Fatalf("Redis holds %d units above the admitted, more than the %d Redis-decided calls that failed", final.over, failedDecides)
	}
}

// TestFailoverUnseenTailHealedAtNextSync: a PoP that does not see a
// failover. PoP a Syncs two identities of one master; the master is killed
// and its replica promoted without a Syncing meanwhile, and a's client
// learns the new slot map on its own (go-redis' periodic reload, or another
// user of the client failing); the replica lacks a's last write of the
// first identity (simulated un-replicated tail). a's next Sync, of the
// second identity only, meets no error, but that identity's master is not
// the one its last Sync went to: a re-sends every own count in the same
// Sync, which heals the first identity, with Resync off. Later Syncs to the same masters re-send
// nothing more (beyond the one re-send the detected loss asks for).
func TestFailoverUnseenTailHealedAtNextSync(t *testing.T) {
	e := newFailoverEnv(t, &fence{})
	a := e.node("a", func(c *Config) { c.NATS = nil; c.Resync = -1 })
	ids := sameMaster(t, e, 2)
	now := e.clock.Now()
	for _, id := range ids {
		for i := 0; i < 5; i++ {
			mustAllow(t, a, id, now)
		}
	}
	mustSync(t, a, now)
	victim, err := e.cl.MasterOf(reconcile.Key("el", ids[0], 0))
	if err != nil {
		t.Fatal(err)
	}
	e.cl.Kill(victim)
	if err := e.cl.WaitHealthy(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the client's slot map to show the promoted replica", func() bool {
		e.rdb.ReloadState(context.Background())
		m, err := e.rdb.MasterForKey(context.Background(), reconcile.Key("el", ids[0], 0))
		return err == nil && m.Options().Addr != e.cl.Node(victim).Addr
	})
	idx, _ := a.position(core.Millis(now))
	k := reconcile.Key("el", ids[0], idx)
	if err := e.rdb.HSet(context.Background(), k, a.ID(), 2).Err(); err != nil {
		t.Fatal(err)
	}
	resends := a.Stats().Resends
	mustAllow(t, a, ids[1], now)
	mustSync(t, a, now)
	if errs := a.Stats().RedisErrors; errs != 0 {
		t.Fatalf("PoP a saw %d Redis errors: the failover was not unseen", errs)
	}
	got, got1 := e.redisTotal(ids[0], idx), e.redisTotal(ids[1], idx)
	if got != 5 || got1 != 6 {
		t.Fatalf("after the first Sync to the promoted replica Redis holds %d and %d, want 5 (the cut tail re-sent) and 6", got, got1)
	}
	if r := a.Stats().Resends; r != resends+1 {
		t.Fatalf("%d full re-sends in that Sync, want 1", r-resends)
	}
	// The re-send itself finds Redis holding less than it had acknowledged
	// (the cut tail) and asks for one more, at the next Sync; after that,
	// Syncs to the same masters re-send nothing.
	for i := 0; i < 3; i++ {
		mustAllow(t, a, ids[1], now)
		mustSync(t, a, now)
	}
	if r := a.Stats().Resends; r > resends+2 {
		t.Fatalf("Syncs to the same masters keep re-sending everything (%d re-sends)", r-resends)
	}
	t.Logf("failover unseen by the PoP (0 Redis errors): its first Sync to the promoted replica re-sent every own count and healed the cut tail (%d of 5 units held)", got)
}

// sameMaster returns count identities served by one master.
func sameMaster(t *testing.T, e *clusterEnv, count int) []string {
	t.Helper()
	master := func(id string) string {
		m, err := e.rdb.MasterForKey(context.Background(), reconcile.Key("el", id, 0))
		if err != nil {
			t.Fatal(err)
		}
		return m.Options().Addr
	}
	out := []string{"u:0"}
	for i := 1; len(out) < count; i++ {
		if id := fmt.Sprint("u:", i); master(id) == master(out[0]) {
			out = append(out, id)
		}
	}
	return out
}
