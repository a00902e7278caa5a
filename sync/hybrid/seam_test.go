package hybrid

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgelimit/edgelimit/core"
)

// TestClosedNodeAdmitsNothing: after Close every decision returns
// core.ErrClosed and counts nothing, so no hit can be admitted that would
// never reach Redis (it kept admitting locally with a nil error before).
func TestClosedNodeAdmitsNothing(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", nil)
	for range 3 {
		mustAllow(t, n, "k", t0)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	before := n.Stats()
	for _, call := range []func() (core.Decision, error){
		func() (core.Decision, error) { return n.Allow(context.Background(), "k") },
		func() (core.Decision, error) { return n.AllowN(context.Background(), "k", t0, 1) },
		func() (core.Decision, error) {
			d, _, err := n.Begin(context.Background(), "k", t0, 1)
			return d, err
		},
	} {
		d, err := call()
		if !errors.Is(err, core.ErrClosed) || d.Allowed {
			t.Fatalf("after Close: allowed=%v err=%v, want denied with core.ErrClosed", d.Allowed, err)
		}
	}
	after := n.Stats()
	if after.LocalDecisions != before.LocalDecisions || after.PendingRedis != 0 {
		t.Fatalf("a closed node counted: local %d→%d, pending %d", before.LocalDecisions, after.LocalDecisions, after.PendingRedis)
	}
	if got := e.redisTotal(DefaultNamespace, "k", e.idx(n)); got != 3 {
		t.Fatalf("Redis holds %d, want the 3 admitted before Close", got)
	}
}

// TestBeginDefersRedisDecision: a request Begin sends to Redis changes
// nothing (view, Redis, round trips) until its Call is made and completed,
// and then decides as AllowN would.
func TestBeginDefersRedisDecision(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Margin = 0.5 })
	ctx := context.Background()
	for range 50 {
		mustAllow(t, n, "k", t0)
	}
	d, c, err := n.Begin(ctx, "k", t0, 1)
	if err != nil || c == nil || d.Allowed {
		t.Fatalf("Begin at the margin: call %v, allowed %v, err %v; want a Call", c != nil, d.Allowed, err)
	}
	if rt := n.Stats().RedisRoundTrips; rt != 0 {
		t.Fatalf("Begin made %d round trips, want 0", rt)
	}
	if p, _ := n.Peek(ctx, "k", t0); p.Remaining != 50 {
		t.Fatalf("view before Complete: remaining %d, want 50 (the pending unit not counted)", p.Remaining)
	}
	n.Exec(ctx, c)
	if got := e.redisTotal(DefaultNamespace, "k", e.idx(n)); got != 51 {
		t.Fatalf("Redis after Exec holds %d, want 51 (50 sent + 1 admitted)", got)
	}
	if p, _ := n.Peek(ctx, "k", t0); p.Remaining != 50 {
		t.Fatalf("view after Exec, before Complete: remaining %d, want 50", p.Remaining)
	}
	d, err = n.Complete(c)
	if err != nil || !d.Allowed || d.Source != core.SourceRedis {
		t.Fatalf("Complete: allowed %v source %v err %v", d.Allowed, d.Source, err)
	}
	if p, _ := n.Peek(ctx, "k", t0); p.Remaining != 49 {
		t.Fatalf("view after Complete: remaining %d, want 49", p.Remaining)
	}
}

// TestFailedCallFallsBack: a Call failed by its driver falls back like an
// unreachable Redis (counted locally, an UnavailableError) and marks Redis
// down, so the next contested request decides without a Call.
func TestFailedCallFallsBack(t *testing.T) {
	_, n, c := atTheMargin(t)
	ctx := context.Background()
	n.Fail(c, errors.New("partitioned"))
	d, err := n.Complete(c)
	if !errors.Is(err, core.ErrUnavailable) || !d.Allowed {
		t.Fatalf("failed call: allowed %v err %v, want a local fallback with ErrUnavailable", d.Allowed, err)
	}
	if _, c2, _ := n.Begin(ctx, "k", t0, 1); c2 != nil {
		t.Fatal("Redis marked down, yet Begin made a Call")
	}
	if s := n.Stats(); s.FallbackLocal != 2 || s.RedisErrors != 1 {
		t.Fatalf("stats: fallback %d errors %d, want 2 and 1", s.FallbackLocal, s.RedisErrors)
	}
}

// TestSyncRoundAppliesAtFinish: a batch's reply changes the view only when
// Finish applies it, and a failed batch puts its identities back in the
// pending set for the next Sync.
func TestSyncRoundAppliesAtFinish(t *testing.T) {
	e := newEnv(t, false)
	a, b := e.node("a", nil), e.node("b", nil)
	ctx := context.Background()
	for range 30 {
		mustAllow(t, b, "k", t0)
	}
	mustSync(t, b, t0)
	mustAllow(t, a, "k", t0)

	r := a.BeginSync(t0)
	c := r.Next(0)
	if c == nil || r.Next(0) != nil {
		t.Fatal("want one batch out, and no second while it is")
	}
	a.Exec(ctx, c)
	if p, _ := a.Peek(ctx, "k", t0); p.Remaining != 99 {
		t.Fatalf("before Finish: remaining %d, want 99 (b's 30 not yet known)", p.Remaining)
	}
	if err := r.Finish(c); err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if p, _ := a.Peek(ctx, "k", t0); p.Remaining != 69 {
		t.Fatalf("after Finish: remaining %d, want 69", p.Remaining)
	}

	mustAllow(t, a, "k", t0)
	r = a.BeginSync(t0)
	c = r.Next(0)
	a.Fail(c, errors.New("lost"))
	if err := r.Finish(c); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("failed batch: %v, want ErrUnavailable", err)
	}
	if p := a.Stats().PendingRedis; p != 1 {
		t.Fatalf("after a failed batch %d identities pending, want 1", p)
	}
	mustSync(t, a, t0)
	if got := e.redisTotal(DefaultNamespace, "k", e.idx(a)); got != 32 {
		t.Fatalf("Redis holds %d after the retry, want 32", got)
	}
}

// TestDecideReplyAfterSyncResends: units admitted locally while a
// Redis-decided call is out, and sent by a Sync that reaches Redis after
// the call, are hidden at Redis by the call's increment (max-merge of the
// field); the call's reply must queue the field again, or Redis keeps one
// unit fewer than this PoP admitted (the honest simulator found it: lost 1
// on the pinned scenario).
func TestDecideReplyAfterSyncResends(t *testing.T) {
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Margin = 0.5 })
	ctx := context.Background()
	for range 60 { // 50 local, 10 decided at Redis, in window k
		mustAllow(t, n, "k", t0)
	}
	mustSync(t, n, t0)
	t1 := t0.Add(10 * time.Second) // window k+1, 0.5 s in: estimate 57, ask Redis
	d, c, err := n.Begin(ctx, "k", t1, 1)
	if err != nil || c == nil {
		t.Fatalf("Begin at %v: %+v, call %v, err %v; want a Call", t1, d, c != nil, err)
	}
	n.Exec(ctx, c) // Redis: field 0 → 1
	t2 := t0.Add(16 * time.Second)
	if d := mustAllow(t, n, "k", t2); d.Source != core.SourceLocal { // estimate 21: local, own 1
		t.Fatalf("at t2 the request went to %v, want local", d.Source)
	}
	mustSync(t, n, t2) // max(1, 1): Redis still 1
	if d, err := n.Complete(c); err != nil || !d.Allowed {
		t.Fatalf("Complete: %+v %v", d, err)
	}
	mustSync(t, n, t2)
	if got := e.redisTotal(DefaultNamespace, "k", e.idx(n)+1); got != 2 {
		t.Fatalf("Redis holds %d units of window k+1, want the 2 admitted", got)
	}
}

// TestLateFailureMarksDownFromDetection: a call that fails a timeout after
// it was made marks Redis down from when the failure is found, not from
// when the call was made (a mark counted from then would already have run
// out, and every contested request would pay the timeout again).
func TestLateFailureMarksDownFromDetection(t *testing.T) {
	e, n, c := atTheMargin(t)
	ctx := context.Background()
	late := t0.Add(2 * time.Second) // a call timeout later, past RedisRetry
	e.clock.Set(late)
	n.Fail(c, errors.New("timed out"))
	if _, err := n.Complete(c); !errors.Is(err, core.ErrUnavailable) {
		t.Fatalf("Complete: %v", err)
	}
	if _, c2, _ := n.Begin(ctx, "k", late, 1); c2 != nil {
		t.Fatal("right after a failure found at 2 s, Begin made a Call: the down mark ran from the call's start")
	}
}

// TestRedisClockLearnsTheOffset: with RedisClock a Sync learns Redis'
// clock (its TIME, the wall clock here) against the Node's own (a manual
// clock set far from it), and the Node then counts in Redis' windows.
func TestRedisClockLearnsTheOffset(t *testing.T) {
	e := newEnv(t, false)
	behind := time.Now().Add(-3 * time.Second).Truncate(time.Millisecond) // this PoP's clock, 3 s behind Redis'
	e.clock.Set(behind)
	n := e.node("a", func(c *Config) { c.RedisClock = true; c.Limit = core.PerWindow(100, time.Second) })
	mustAllow(t, n, "k", behind)
	if n.ClockOffset() != 0 {
		t.Fatalf("offset %v before any Sync, want 0", n.ClockOffset())
	}
	// Redis runs on this machine's clock: the offset is its reading during
	// the Sync minus the frozen clock, whatever the Sync took (no bound in
	// wall time; 1 ms for truncation).
	before := time.Now()
	mustSync(t, n, behind)
	after := time.Now()
	if off := n.ClockOffset(); off < before.Sub(behind)-time.Millisecond || off > after.Sub(behind)+time.Millisecond {
		t.Fatalf("offset %v, want Redis' clock minus the Node's: between %v and %v", off, before.Sub(behind), after.Sub(behind))
	}
	mustAllow(t, n, "k", behind)
	learned := (core.Millis(behind) + n.ClockOffset().Milliseconds()) / 1000 // the window the second unit is in
	mustSync(t, n, behind)
	if got := e.redisTotal(DefaultNamespace, "k", learned); got != 1 {
		t.Fatalf("Redis' window at the learned offset holds %d units, want the one admitted after the offset was learned", got)
	}
	if old := e.redisTotal(DefaultNamespace, "k", behind.UnixMilli()/1000); old != 1 {
		t.Fatalf("the window of the Node's own clock holds %d, want the first unit", old)
	}
}

// atTheMargin is a Node (margin 0.5) that admitted 50 of 100 units of "k"
// locally, and the Call Begin returned for the next one.
func atTheMargin(t *testing.T) (*env, *Node, *Call) {
	t.Helper()
	e := newEnv(t, false)
	n := e.node("a", func(c *Config) { c.Margin = 0.5 })
	for range 50 {
		mustAllow(t, n, "k", t0)
	}
	_, c, _ := n.Begin(context.Background(), "k", t0, 1)
	if c == nil {
		t.Fatal("Begin at the margin made no Call")
	}
	return e, n, c
}
